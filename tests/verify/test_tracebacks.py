"""Which frame of a pytest traceback is the project's, and a conftest's load error."""

from __future__ import annotations

from pathlib import Path

from agent_habitat.verify.parsers import parse_junit
from agent_habitat.verify.tracebacks import conftest_error, in_project, project_frame

CONFTEST_FAILED = """ImportError while loading conftest '{root}/tests/conftest.py'.
tests/conftest.py:1: in <module>
    from pkg import settings
pkg/settings.py:3: in <module>
    LIMIT = int("ten")
E   ValueError: invalid literal for int() with base 10: 'ten'
"""


def test_installed_packages_and_paths_outside_the_root_are_not_the_projects() -> None:
    assert in_project("pkg/mod.py")
    assert not in_project(".venv/lib/python3.12/site-packages/yaml/__init__.py")
    assert not in_project("/usr/lib/python3.12/json/decoder.py")
    assert not in_project("../elsewhere/mod.py")


def test_the_deepest_frame_in_the_project_is_named_not_a_librarys(tmp_path: Path) -> None:
    text = (
        "tests/test_a.py:2: in <module>\n    import pkg\n"
        "pkg/__init__.py:4: in <module>\n    json.loads('x')\n"
        "/usr/lib/python3.12/json/__init__.py:346: in loads\n    return ...\n"
    )
    assert project_frame(text, tmp_path) == ("pkg/__init__.py", 4)


def test_a_conftest_that_fails_on_the_projects_code_is_located_there(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    found = conftest_error(CONFTEST_FAILED.format(root=tmp_path), tmp_path)
    assert found is not None
    assert (found.file, found.line, found.code) == ("pkg/settings.py", 3, "ValueError")
    assert found.message.startswith("tests/conftest.py: collection error: ValueError: invalid")


def test_a_conftest_importing_a_package_not_installed_is_not_the_codes(tmp_path: Path) -> None:
    text = (
        f"ImportError while loading conftest '{tmp_path}/tests/conftest.py'.\n"
        "tests/conftest.py:1: in <module>\n    import hypothesis\n"
        "E   ModuleNotFoundError: No module named 'hypothesis'\n"
    )
    assert conftest_error(text, tmp_path) is None
    (tmp_path / "hypothesis.py").write_text("", encoding="utf-8")  # now it is the project's
    assert conftest_error(text, tmp_path) is not None


def test_a_junit_collection_error_says_what_was_raised_and_where(tmp_path: Path) -> None:
    xml = tmp_path / "report.xml"
    xml.write_text(
        '<testsuites><testsuite><testcase classname="" name="tests.test_mod" '
        'file="tests/test_mod.py"><error message="collection failure">'
        "tests/test_mod.py:1: in &lt;module&gt;\n    from pkg.mod import X\n"
        'pkg/mod.py:2: in &lt;module&gt;\n    raise ValueError("bad config")\n'
        "E   ValueError: bad config</error></testcase></testsuite></testsuites>",
        encoding="utf-8",
    )
    (diag,) = parse_junit(xml, tmp_path) or []
    assert (diag.file, diag.line, diag.code) == ("pkg/mod.py", 2, "ValueError")
    assert diag.message == (
        "tests/test_mod.py: collection error: ValueError: bad config (raised at pkg/mod.py:2)"
    )
