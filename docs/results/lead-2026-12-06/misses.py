"""What the models called first on v2 where the call was not exact, per kind."""
import json, sys
from collections import Counter
dec = "held"
for m in sys.argv[1:]:
    c = Counter()
    for line in open(f"runs/lead/eval/{m}-v2-{dec}.cases.jsonl"):
        r = json.loads(line)
        if r["calls"]["needs_call"] and not r["calls"]["first_call_exact"]:
            first = next((tc["function"]["name"] for msg in r["transcript"] if msg["role"] == "assistant"
                          for tc in msg.get("tool_calls") or []), "-")
            c[(r["kind"], first, "right tool" if r["calls"]["first_tool_right"] else "wrong")] += 1
    print(m, sum(c.values()))
    for k, v in sorted(c.items()):
        print("   ", v, k)
