"""Without OpenTelemetry installed, jobtable imports none of it and stores no trace context."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_without_opentelemetry_installed_nothing_of_it_is_imported():
    """A process where ``opentelemetry`` cannot be imported runs jobs, tracing nothing."""
    script = textwrap.dedent(
        """
        import sys

        class NotInstalled:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] == "opentelemetry":
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None

        sys.meta_path.insert(0, NotInstalled())
        from jobtable import MemoryStore, Runner, SystemClock
        from jobtable.core.tracing import NO_TRACING
        from tests.unit.kinds_for_tests import CountPayload, count

        store = MemoryStore()
        runner = Runner(store, SystemClock(), workers=1)
        assert runner.client.tracing is NO_TRACING
        kind = runner.kinds.register("counted", count, payload=CountPayload)
        runner.start()
        job = runner.wait(kind.enqueue(CountPayload()), timeout=30)
        runner.stop()
        runner.join(timeout=30)
        loaded = sorted(name for name in sys.modules if name.startswith("opentelemetry"))
        print(job.status.value, store.row(job.id)["trace_context"], loaded)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["succeeded", "None", "[]"]
