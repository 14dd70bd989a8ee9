"""Print each entry's statuses and its check messages (one per distinct message) from results.jsonl."""

import json
import re
import sys

path = sys.argv[1] if len(sys.argv) > 1 else "results.jsonl"
for line in open(path):
    r = json.loads(line)
    st = [d["status"] for d in r["draws"]]
    msgs = []
    for d in r["draws"]:
        m = re.search(r"message=(['\"])(.*)\1\)$", d.get("result_repr", ""), re.S)
        msg = m.group(2) if m else d.get("cell_exception") or d.get("check_exception") or ""
        if msg not in msgs:
            msgs.append(msg)
    print(f"{r['id']} [{r['kind']}] {st} :: {r['desc']}")
    for m in msgs:
        print("    >", m[:600])
