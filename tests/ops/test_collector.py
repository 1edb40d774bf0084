"""The server, its worker processes and the latency benchmark run the garbage collector one way
(``service.collector``): what exists once started frozen, full collections a hundred times rarer."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

TUNERS = {
    "server": "from api.serve import _tune_for_serving as tune",
    "worker process": "from service.worker_pool import _tune_garbage_collection as tune",
    "benchmark": "from service.collector import tune_collector as tune",
}


@pytest.mark.parametrize("where", sorted(TUNERS))
def test_each_process_tunes_the_collector_alike(where):
    code = (
        f"import gc; {TUNERS[where]}\n"
        "before = gc.get_freeze_count()\n"
        "tune()\n"
        "print(gc.get_threshold(), before == 0 < gc.get_freeze_count())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["(2000,", "10,", "1000)", "True"]
