#!/usr/bin/env python3
"""`attnbench schema` against a real JSON Schema validator (issue 38, part 2).

Prints the schema, checks it against the draft 2020-12 meta-schema, then with check-jsonschema
(from the test-only environment scripts/setup.sh makes, default /opt/attnbench/tools-venv, not
the LibTorch one): every shipped config (configs/**/*.json with "variants") validates against it,
and every config in tests/config/bad/ (one mistake each) fails both the schema and `attnbench
validate` (exit 2). Skips (77, with the reason) only when that environment has no check-jsonschema.

    test_config_schema.py ATTNBENCH SOURCE_DIR TOOLS_PYTHON
"""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SKIP = 77


def main():
    attnbench, source, tools_python = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    checker = Path(tools_python).parent / "check-jsonschema"
    if not os.path.exists(tools_python) or not checker.exists():
        print(f"SKIPPED: no check-jsonschema in {tools_python}'s environment (scripts/setup.sh installs it into "
              "the test-only /opt/attnbench/tools-venv)")
        return SKIP
    with tempfile.TemporaryDirectory(prefix="attnbench-schema-") as tmp:
        schema = Path(tmp) / "config.schema.json"
        r = subprocess.run([attnbench, "schema", "--out", str(schema)], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, f"attnbench schema exited {r.returncode}:\n{r.stdout}{r.stderr}"
        doc = json.loads(schema.read_text())
        assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema", doc.get("$schema")
        # The same text on stdout as with --out.
        stdout = subprocess.run([attnbench, "schema"], capture_output=True, text=True, timeout=60, check=True).stdout
        assert json.loads(stdout) == doc

        r = subprocess.run([str(checker), "--check-metaschema", str(schema)], capture_output=True, text=True)
        assert r.returncode == 0, f"the schema is not a valid draft 2020-12 schema:\n{r.stdout}{r.stderr}"

        shipped = sorted(p for p in (source / "configs").rglob("*.json")
                         if isinstance(json.loads(p.read_text()), dict) and "variants" in json.loads(p.read_text()))
        assert len(shipped) >= 20, shipped
        r = subprocess.run([str(checker), "--schemafile", str(schema)] + [str(p) for p in shipped],
                           capture_output=True, text=True)
        assert r.returncode == 0, f"a shipped config fails the schema:\n{r.stdout}{r.stderr}"
        print(f"{len(shipped)} shipped configs validate against the schema")

        bad = sorted((source / "tests" / "config" / "bad").glob("*.json"))
        assert len(bad) >= 20, bad
        failures = []
        for p in bad:
            v = subprocess.run([attnbench, "validate", "--no-cost-check", str(p)], capture_output=True, text=True,
                               timeout=60)
            s = subprocess.run([str(checker), "--schemafile", str(schema), str(p)], capture_output=True, text=True)
            if v.returncode != 2:
                failures.append(f"{p.name}: attnbench validate exited {v.returncode}, not 2:\n{v.stdout}{v.stderr}")
            if s.returncode != 1:
                failures.append(f"{p.name}: check-jsonschema exited {s.returncode}, not 1 (the schema accepts it)")
        assert not failures, "\n".join(failures)
        print(f"{len(bad)} bad configs fail both attnbench validate (exit 2) and the schema")
    return 0


if __name__ == "__main__":
    sys.exit(main())
