"""Generate the reference statistics of the release test matrix, one subprocess per configuration."""
import os
import subprocess
import sys

import climod

os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"

CONFIGS = [(8, 48, 96), (8, 64, 128), (16, 64, 128)]


def generate(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    print(f"climod {climod.Model.__name__}: {len(CONFIGS)} configurations")
    for levels, lat, lon in CONFIGS:
        subprocess.run(
            [sys.executable, "-m", "climod_run", str(levels), str(lat), str(lon), out_dir],
            check=True,
        )


if __name__ == "__main__":
    generate(sys.argv[1] if len(sys.argv) > 1 else "stats")
