"""What the check scripts share: each check prints one JSON line, and a failing one never stops the rest."""

import json
import traceback

failures = 0


def check(name):
    """Runs the decorated function at once as the check `name`; what it returns is the detail."""

    def run(fn):
        global failures
        try:
            detail, ok = fn(), True
        except Exception as e:  # noqa: BLE001 - every failure is reported, none ends the run
            failures += 1
            # The check's own line that failed, not one in a helper or deep in the client.
            frames = traceback.extract_tb(e.__traceback__)
            own = fn.__code__.co_filename
            line = next((f.lineno for f in reversed(frames) if f.filename == own and f.name == fn.__name__), None)
            detail, ok = f"{type(e).__name__}: {e} (line {line})", False
        print(json.dumps({"check": name, "ok": ok, "detail": detail}, default=str), flush=True)
        return fn

    return run


def expect(condition, message):
    if not condition:
        raise AssertionError(message)


def exit_status():
    """1 when any check failed, for sys.exit."""
    return 1 if failures else 0
