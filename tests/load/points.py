#!/usr/bin/env python3
"""Canonical point sets for the load tests: reads `vforge cat` JSON lines on stdin and prints one
sorted JSON line per point, {"id", "emb", "payload"}, so two point sets compare with diff.

  points.py corpus KEY=COLUMN...   the expected side: `vforge cat --with-id ...` of the corpus;
                                   the payload is built as the loader builds it (KEY from COLUMN,
                                   nulls omitted, a string holding a JSON object unpacked)
  points.py store                  the store side: `vforge cat` of a local collection's segments
                                   (columns id, id_num, emb, payload); fails when an id is
                                   stored more than once
"""
import json
import sys


def unpack(v):
    if isinstance(v, str) and v.lstrip().startswith("{"):
        try:
            o = json.loads(v)
            if isinstance(o, dict):
                return o
        except ValueError:
            pass
    return v


def main():
    mode = sys.argv[1]
    fields = [a.split("=", 1) for a in sys.argv[2:]]
    out = {}
    for line in sys.stdin:
        r = json.loads(line)
        if mode == "corpus":
            pid = r["__id__"]
            payload = {k: unpack(r[c]) for k, c in fields if r.get(c) is not None}
            emb = r["emb"]
        else:
            pid = r["id"]
            payload = json.loads(r["payload"]) if r.get("payload") is not None else {}
            emb = r["emb"]
        if pid in out:
            sys.exit("points.py: id %s appears more than once" % pid)
        out[pid] = json.dumps({"id": pid, "emb": emb, "payload": payload}, sort_keys=True)
    for pid in sorted(out):
        print(out[pid])


main()
