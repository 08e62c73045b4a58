"""Time of `import clm_nb` in a fresh interpreter (warm file cache), and what it loads (run by hand).

    .venv/bin/python benchmarks/bench_import.py [repeats]

Target (issue 21): <= 1.5 s warm. Prints the best and median wall time of `repeats` fresh imports, the
libraries loaded, and the ten largest cumulative entries of `python -X importtime`.
"""
import json, statistics, subprocess, sys, time

repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 7
CODE = "import clm_nb"
subprocess.run([sys.executable, "-c", CODE], check=True)              # warm the file cache and numba's cache
times = []
for _ in range(repeats):
    t = time.perf_counter(); subprocess.run([sys.executable, "-c", CODE], check=True)
    times.append(time.perf_counter() - t)
base = []
for _ in range(repeats):
    t = time.perf_counter(); subprocess.run([sys.executable, "-c", "pass"], check=True)
    base.append(time.perf_counter() - t)
print(f"import clm_nb: best {min(times):.2f} s, median {statistics.median(times):.2f} s "
      f"(bare interpreter: {min(base):.2f} s) over {repeats} fresh processes")
mods = json.loads(subprocess.run([sys.executable, "-c", "import sys, json, clm_nb; print(json.dumps(sorted(sys.modules)))"],
                                 capture_output=True, text=True, check=True).stdout)
top = sorted({m.split(".")[0] for m in mods if not m.startswith("_")} - set(sys.stdlib_module_names) - {"cython_runtime"})
print("third-party packages loaded:", ", ".join(top))
err = subprocess.run([sys.executable, "-X", "importtime", "-c", CODE], capture_output=True, text=True).stderr
rows = []
for line in err.splitlines()[1:]:
    try:
        _, self_us, cum_us, name = [s.strip() for s in line.replace("import time:", "").split("|")][0:1] + \
            [s.strip() for s in line.replace("import time:", "").split("|")]
        rows.append((int(cum_us), name))
    except ValueError:
        continue
print("largest cumulative imports (s):")
for cum, name in sorted(rows, reverse=True)[:10]:
    print(f"  {cum / 1e6:6.2f}  {name}")
