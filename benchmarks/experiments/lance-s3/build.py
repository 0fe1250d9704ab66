"""Write the exported chunks as a LanceDB table with an IVF_PQ and an FTS index.
Usage: build.py DB_FOLDER BASE (BASE from export.py). Built in a local folder that
rclone serves: building through rclone serve s3 fails (see README.md)."""
import sys, json, time, numpy as np, pyarrow as pa, lancedb
folder, base = sys.argv[1], sys.argv[2]
mat = np.load(base + ".npy"); recs = [json.loads(l) for l in open(base + ".jsonl")]
t = time.time()
db = lancedb.connect(folder)
tbl = pa.table({"id": [r["id"] for r in recs], "path": [r["path"] for r in recs], "text": [r["text"] for r in recs],
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(mat.reshape(-1)), 384)})
table = db.create_table("chunks", tbl, mode="overwrite")
print("write", time.time() - t, flush=True)
t = time.time(); table.create_index(metric="cosine", vector_column_name="vector", num_partitions=256, num_sub_vectors=48); print("ivfpq", time.time() - t, flush=True)
t = time.time(); table.create_fts_index("text"); print("fts", time.time() - t, flush=True)
