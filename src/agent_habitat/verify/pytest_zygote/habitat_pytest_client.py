"""Written by agent-habitat: what a test rung runs in place of `python -m pytest` where a
warm pytest serves (habitat_pytest_zygote.py beside this file):

    python -I -S habitat_pytest_client.py ADDRESS REPORT -- PYTHON -m pytest ARGS...

It hands the warm pytest its stdin, stdout, stderr, working folder and environment, passes
on the signals it gets, and ends as the test process ended: its exit code, or killed by
the same signal. When no warm pytest answers, or it answers `fresh`, it execs the command
line after `--` itself. REPORT gets one line: `warm: pid N` or `fresh: WHY`. Built-in
modules only: this start-up is paid on every run.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # signal.py's enums cost start-up time
import _socket
import marshal
import os
import sys

_FORWARDED = ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")


def _read_line(conn: _socket.socket) -> str | None:
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(4096)
        if not chunk:
            return None
        data += chunk
    return data.decode().strip()


def _report(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as out:
        out.write(text + "\n")


def main(address: str, report: str, fresh: list[str]) -> None:
    def fall_back(why: str) -> None:
        _report(report, f"fresh: {why}")
        os.execv(fresh[0], fresh)

    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.connect("\0" + address)
        body = marshal.dumps({"args": fresh[3:], "cwd": os.getcwd(), "env": dict(os.environ)})
        fds = b"".join(fd.to_bytes(4, sys.byteorder) for fd in (0, 1, 2))
        conn.sendmsg(
            [len(body).to_bytes(4, "big") + body],
            [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)],
        )
        reply = _read_line(conn)
    except OSError as error:
        conn.close()
        fall_back(f"no warm pytest ({error.strerror or error})")
    word, _, rest = (reply or "").partition(" ")
    if word != "pid":
        conn.close()
        fall_back(rest if word == "fresh" else "the warm pytest did not answer")
    pid = int(rest)
    _report(report, f"warm: pid {pid}")

    def forward(signum: int, _frame: object) -> None:
        try:
            os.kill(pid, signum)
        except OSError:
            pass

    for name in _FORWARDED:
        _signal.signal(getattr(_signal, name), forward)
    try:
        ended = _read_line(conn)
    except OSError:
        ended = None
    if ended is None or not ended.startswith("status "):
        os.write(2, b"agent-habitat: the warm pytest ended without an exit status\n")
        os._exit(3)
    status = int(ended.split()[1])
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        _signal.signal(signum, _signal.SIG_DFL)
        os.kill(os.getpid(), signum)
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


if __name__ == "__main__":
    split = sys.argv.index("--")
    main(sys.argv[1], sys.argv[2], sys.argv[split + 1 :])
