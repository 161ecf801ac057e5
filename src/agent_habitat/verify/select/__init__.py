# verify/select/: which tests a change needs, and the data that says so.
#   selection    import-graph impact and test selection (Impact, analyse_impact)
#   deps         selection narrowed by the recorded per-test dependency data
#   same_code    a change of comments and blank lines only: the code is HEAD's, no test runs
#   doubts       which recorded runs still vouch for their tests, and those none can
#   memo         what a long-lived process keeps between climbs (the graph, the records)
#   named_imports  a module named by a string literal (a plugin table) as an import of it
#   side_graph   the test side's imports, per file;   testdeps  per-test dependency data:
#                recording a pytest run (`-p habitat_testdeps`) and reading it back
#   testdeps_plugin/   the pytest plugin a recorded run loads (stdlib only, in the project's
#                interpreter): habitat_testdeps (its hooks; each failure named as it fails)
#                and habitat_testdeps_recorder (the recorder)
# Nothing is imported here: callers name the module they need.
