// A jest reporter the habitat adds beside the project's own (verify/toolchains/node/
// head_ahead.py): each test file that ends with failed tests, as a JSON line
// `{"file": <path>, "names": [<full name>, ...]}` appended to the file its options name when
// jest reports the file's result, so HEAD's run of those tests can start while the others
// still run. It reports nothing else and changes nothing of the run.
"use strict";

const fs = require("fs");

class FailedStream {
  constructor(_globalConfig, options) {
    this.out = options && options.file;
  }

  onTestResult(test, result) {
    const cases = (result && result.testResults) || [];
    const names = cases.filter((c) => c.status === "failed").map((c) => c.fullName || c.title);
    if (!this.out || names.length === 0) return;
    try {
      fs.appendFileSync(this.out, `${JSON.stringify({ file: test.path, names })}\n`);
    } catch {
      // the verify is gone: nothing waits for the stream
    }
  }
}

module.exports = FailedStream;
