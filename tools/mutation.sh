#!/usr/bin/env bash
# The mutation gate of the trusted core: run mutmut on one named area and print its surviving-mutant count.
#
#   tools/mutation.sh                      list the areas ([tool.margintheory.mutation.*] in pyproject.toml)
#   tools/mutation.sh AREA                 mutate the area from scratch and count (the figure docs/checks.md quotes)
#   tools/mutation.sh AREA --survivors     re-run only the mutants not killed last time (after adding tests)
#   tools/mutation.sh AREA --count         only count the last run's results
#   tools/mutation.sh AREA --show          print the diff of every mutant not killed last time
#
# mutmut runs in a scratch copy, .mutation/AREA/ (git-ignored), whose pyproject.toml holds [tool.mutmut] from the
# repository's pyproject.toml plus the area's `only_mutate` and its test selection (and, for an area that is some
# functions of a file, their mutmut name patterns `mutants`); every mutant runs only the tests of that selection which
# reach the mutated function.  JOBS (default 1) is the number of mutants tested at once.
# Needs the `mutation` extra (pip install -e '.[mutation]').  Exit status: 0 when no mutant survives, 1 otherwise.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-python}

areas() {
    "$python" - "$root/pyproject.toml" <<'EOF'
import sys, tomllib
areas = tomllib.load(open(sys.argv[1], "rb"))["tool"]["margintheory"]["mutation"]
for name, area in areas.items():
    print(f"  {name:12s} {' '.join(area['only_mutate'])}")
EOF
}

if [ $# -lt 1 ]; then
    echo "usage: tools/mutation.sh AREA [--survivors | --count | --show]; areas:"
    areas
    exit 2
fi
area=$1
mode=${2:-full}
work=$root/.mutation/$area
if ! areas | awk '{print $1}' | grep -qx -- "$area"; then
    echo "tools/mutation.sh: no area '$area'; areas:" >&2
    areas >&2
    exit 2
fi

# the scratch copy's pyproject.toml: the shared [tool.mutmut] table plus the area's files and tests
write_config() {
    "$python" - "$root/pyproject.toml" "$area" "$work/pyproject.toml" <<'EOF'
import json, sys, tomllib
src, area, out = sys.argv[1:]
tool = tomllib.load(open(src, "rb"))["tool"]
areas = tool["margintheory"]["mutation"]
if area not in areas:
    sys.exit(f"tools/mutation.sh: no area {area!r}; areas: {', '.join(areas)}")
mutmut = dict(tool["mutmut"])
mutmut["only_mutate"] = areas[area]["only_mutate"]
mutmut["pytest_add_cli_args_test_selection"] = areas[area]["tests"]
mutmut["mutants"] = areas[area].get("mutants", [])  # (not a mutmut key: the functions of the area, read below)
pytest_ini = {k: v for k, v in tool["pytest"]["ini_options"].items() if k != "addopts"}
with open(out, "w") as fh:  # JSON literals of strings, numbers, booleans and lists are TOML literals too
    for table, items in (("tool.mutmut", mutmut), ("tool.pytest.ini_options", pytest_ini)):
        fh.write(f"[{table}]\n")
        for key, value in items.items():
            fh.write(f"{key} = {json.dumps(value)}\n")
EOF
}

# the statuses of the area's mutants from mutmut's result files (.meta), per file and in all
count() {
    cd "$work"
    "$python" - "$area" <<'EOF'
import collections, fnmatch, json, pathlib, sys, tomllib
from mutmut.stats import status_by_exit_code
area = sys.argv[1]
conf = tomllib.load(open("pyproject.toml", "rb"))["tool"]["mutmut"]
patterns, functions = conf["only_mutate"], conf.get("mutants", [])
total = collections.Counter()
not_killed = []
for meta in sorted(pathlib.Path("mutants").rglob("*.py.meta")):
    source = str(meta.relative_to("mutants"))[: -len(".meta")]
    if not any(fnmatch.fnmatch(source, p) for p in patterns):
        continue
    codes = json.loads(meta.read_text())["exit_code_by_key"]
    if functions:  # the area is these functions of the file
        codes = {k: v for k, v in codes.items() if any(fnmatch.fnmatch(k, f) for f in functions)}
    if not codes:
        continue
    c = collections.Counter(status_by_exit_code[v] for v in codes.values())
    killed = c["killed"] + c["timeout"]
    rest = {s: n for s, n in c.items() if s not in ("killed", "timeout")}
    print(f"{source}: {sum(c.values())} mutants, {killed} killed ({c['timeout']} by timeout), not killed: {rest or 0}")
    total += c
    not_killed += [k for k, v in codes.items() if status_by_exit_code[v] not in ("killed", "timeout")]
killed = total["killed"] + total["timeout"]
n = sum(total.values())
print(f"area {area}: {n} mutants, {killed} killed ({100 * killed / max(n, 1):.1f} %), "
      f"surviving mutants: {len(not_killed)}")
pathlib.Path("survivors.txt").write_text("".join(f"{k}\n" for k in not_killed))
sys.exit(1 if not_killed else 0)
EOF
}

case $mode in
    --count) count; exit $? ;;
    --show)
        cd "$work"
        while read -r name; do env -u PYTHONPATH mutmut show "$name"; done < survivors.txt
        exit 0 ;;
    full|--survivors) ;;
    *) echo "tools/mutation.sh: unknown option $mode" >&2; exit 2 ;;
esac

mkdir -p "$work"
write_config
if [ "$mode" = full ]; then
    rm -rf "$work/mutants" "$work/survivors.txt"
fi
# the sources and tests, with their modification times (mutmut regenerates the mutants of a changed file only)
rm -rf "$work/margintheory" "$work/tests"
cp -a "$root/margintheory" "$root/tests" "$work/"
find "$work" -name __pycache__ -prune -exec rm -rf {} +

# the area's functions (mutmut name patterns), when it is not whole files
mapfile -t names < <("$python" -c 'import sys, tomllib; print(*tomllib.load(open(sys.argv[1], "rb"))["tool"]["mutmut"].get("mutants", []), sep="\n")' "$work/pyproject.toml" | grep -v '^$' || true)
if [ "$mode" = --survivors ]; then
    mapfile -t names < "$work/survivors.txt"
    if [ ${#names[@]} -eq 0 ]; then count; exit $?; fi
fi
cd "$work"
echo "mutating area $area in $work (log: $work/mutmut.log)"
# PYTHONPATH must not name the repository: the tests have to import the mutated copy
env -u PYTHONPATH mutmut run --max-children "${JOBS:-1}" "${names[@]}" > mutmut.log 2>&1 || {
    tail -n 30 mutmut.log
    echo "tools/mutation.sh: mutmut failed (log: $work/mutmut.log)" >&2
    exit 2
}
count
