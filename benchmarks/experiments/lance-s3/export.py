"""Export chunks and vectors of a brainfs index file (SearchIndex) for the LanceDB probe.
Usage: export.py INDEX.sqlite BASE -> BASE.npy (vectors), BASE.ids.npy, BASE.jsonl (rows)."""
import apsw, sqlite_vec, numpy as np, json, sys
src = sys.argv[1]; out = sys.argv[2]
c = apsw.Connection(src); c.enable_load_extension(True); c.load_extension(sqlite_vec.loadable_path())
rows = c.execute("SELECT id, path, anchor, text FROM chunks ORDER BY id").fetchall()
vec = dict(c.execute("SELECT rowid, embedding FROM chunks_vec").fetchall())
ids = np.array([r[0] for r in rows], dtype=np.int64)
mat = np.frombuffer(b"".join(vec[r[0]] for r in rows), dtype=np.float32).reshape(len(rows), 384)
np.save(out + ".npy", mat); np.save(out + ".ids.npy", ids)
with open(out + ".jsonl", "w") as f:
    for r in rows: f.write(json.dumps({"id": r[0], "path": r[1], "anchor": r[2], "text": r[3]}) + "\n")
print(len(rows))
