"""One cold process: open the table in place on S3, two vector and two FTS queries, timed.
Usage: query.py ENDPOINT BASE (ENDPOINT: fix206.py in front of the 20 ms proxy)."""
import sys, json, time, numpy as np, lancedb
endpoint, base = sys.argv[1], sys.argv[2]
opts = {"endpoint": endpoint, "aws_access_key_id": "brainfs", "aws_secret_access_key": "brainfs-local-secret",
        "region": "us-east-1", "allow_http": "true", "aws_virtual_hosted_style_request": "false"}
q = np.load(base + ".npy")[12345]
t0 = time.time()
db = lancedb.connect("s3://lance/db", storage_options=opts)
table = db.open_table("chunks")
t1 = time.time()
v = table.search(q, vector_column_name="vector").limit(50).select(["id", "path"]).to_list()
t2 = time.time()
f = table.search("quiet routes leads", query_type="fts").limit(50).select(["id", "path"]).to_list()
t3 = time.time()
v2 = table.search(q * 0.9 + np.load(base + ".npy")[99] * 0.1, vector_column_name="vector").limit(50).select(["id", "path"]).to_list()
t4 = time.time()
f2 = table.search("budget sign language interpretation", query_type="fts").limit(50).select(["id", "path"]).to_list()
t5 = time.time()
print(json.dumps({"open_s": t1 - t0, "first_vector_s": t2 - t1, "first_fts_s": t3 - t2, "second_vector_s": t4 - t3, "second_fts_s": t5 - t4, "hits": [len(v), len(f)]}))
