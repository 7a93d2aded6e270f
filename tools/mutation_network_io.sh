#!/usr/bin/env bash
# Mutation testing of the network-file readers (margintheory/network_io/) with mutmut, in a scratch copy of the working
# tree: it brings its own mutmut configuration (below), so it neither needs nor changes the repository's
# pyproject.toml [tool.mutmut] (tools/mutation.sh covers the rest of the trusted core).
#
#   tools/mutation_network_io.sh [FILES] [MAX_CHILDREN]
#
# FILES: glob of the modules to mutate (default 'margintheory/network_io/*'; e.g.
# 'margintheory/network_io/weights_only_pickle.py'); MAX_CHILDREN: parallel test processes (default 2).
# MUTATION_WORKDIR: where the copy is made (default: a new temporary directory, kept for `mutmut show NAME` there).
# Prints the surviving mutants and a last line "network_io: K killed, S survived, ... of N mutants".
#
# Last run (weights_only_pickle.py, mutmut 3.8.1, 2 children, under load): 780 of 900 mutants killed (87 %), 120
# survive: message texts, import-time closures (the allow-list's container builders are made when the module is
# imported, before mutmut switches a mutant on), and equivalent changes (signed vs unsigned 4-byte lengths, which
# differ only beyond 2 GiB; the spacing of the time checks; strict zips after a length check).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
files=${1:-margintheory/network_io/*}
children=${2:-2}
work=${MUTATION_WORKDIR:-$(mktemp -d "${TMPDIR:-/tmp}/mutation-network-io.XXXXXX")}
mkdir -p "$work"
(cd "$root" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$work")
cd "$work"
# the tests that exercise the readers; the hostile-file campaign (subprocesses, ~15 s) is left out of every mutant run
MUTATION_FILES="$files" python - <<'EOF'
import os
import re
from pathlib import Path

path = Path("pyproject.toml")
text = re.sub(r"(?ms)^\[tool\.mutmut\].*?(?=^\[|\Z)", "", path.read_text())
path.write_text(text.rstrip() + f'''

[tool.mutmut]
source_paths = ["margintheory/"]
only_mutate = ["{os.environ["MUTATION_FILES"]}"]
pytest_add_cli_args_test_selection = ["tests/test_weights_only_pickle.py", "tests/test_reader_limits.py",
                                      "tests/test_network_io.py",
                                      "tests/faults/test_extreme_values.py"]
pytest_add_cli_args = ["-p", "no:cacheprovider", "-p", "no:randomly", "-q"]
timeout_multiplier = 5.0
''')
EOF
export PYTHONPATH="$work"
mutmut run --max-children "$children" >mutmut-run.log 2>&1 || true
mutmut results --all true >mutmut-results.txt 2>/dev/null || mutmut results >mutmut-results.txt
grep -v ": killed" mutmut-results.txt || true
python - <<'EOF'
from collections import Counter

counts = Counter(line.rsplit(": ", 1)[1].strip() for line in open("mutmut-results.txt") if ": " in line)
total = sum(counts.values())
rest = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()) if s not in ("killed", "survived"))
print(f"network_io: {counts['killed']} killed, {counts['survived']} survived{', ' + rest if rest else ''} "
      f"of {total} mutants ({100 * counts['killed'] / max(total, 1):.0f} % killed); work directory {__import__('os').getcwd()}")
EOF
