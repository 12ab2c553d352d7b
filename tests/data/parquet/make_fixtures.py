"""Writes the Parquet fixtures of tests/common/parquet_rows_test.cc with pyarrow, and next
to each NAME.parquet the rows pyarrow reads back, as NAME.jsonl (one JSON object a row)
— the reference the C++ reader must reproduce. pyarrow is not a dependency of the
project; run this where it is installed (the GPU host has it) and commit the output:

  python3 tests/data/parquet/make_fixtures.py OUT_DIR [NAME ...]   # NAME: only those row fixtures
"""
import json
import os
import sys

import pyarrow as pa
import pyarrow.parquet as pq


def gsm8k_rows():
    """Rows as verl's examples/data_preprocess/gsm8k.py writes them."""
    rows = []
    for index, (question, answer, truth) in enumerate([
        ("Natalia sold clips to 48 of her friends in April, and then she sold half as many "
         "clips in May. How many clips did Natalia sell altogether in April and May?",
         "Natalia sold 48/2 = <<48/2=24>>24 clips in May.\n#### 72", "72"),
        ("Weng earns $12 an hour for babysitting. Yesterday, she just did 50 minutes of "
         "babysitting. How much did she earn?", "Weng earns 12/60 = $<<12/60=0.2>>0.2 per "
         "minute.\n#### 10", "10"),
        ("Betty is saving money for a new wallet which costs $100. — ¿cuánto? 钱包",
         "#### 5", "5"),
    ]):
        rows.append({
            "data_source": "openai/gsm8k",
            "prompt": [{"role": "user", "content": question +
                        " Let's think step by step and output the final answer after \"####\"."}],
            "ability": "math",
            "reward_model": {"style": "rule", "ground_truth": truth},
            "extra_info": {"split": "train", "index": index, "answer": answer,
                           "question": question},
        })
    return rows


def trl_preference_rows():
    """Rows as trl-lib/ultrafeedback_binarized holds them: chosen and rejected whole chats
    (their first message, the prompt, shared), scores beside them."""
    rows = []
    for question, good, bad, scores in [
        ("What is 2 + 2?", "2 + 2 = 4.", "It is 5.", (9.0, 2.0)),
        ("Name a prime number.", "7 is prime.", "8 is prime.", (8.5, 3.0)),
    ]:
        user = {"content": question, "role": "user"}
        rows.append({
            "chosen": [user, {"content": good, "role": "assistant"}],
            "rejected": [user, {"content": bad, "role": "assistant"}],
            "score_chosen": scores[0],
            "score_rejected": scores[1],
        })
    return rows


def typed_table():
    """Seven rows of every type the reader reads, with nulls at each nesting level."""
    return pa.table({
        "text": pa.array(["a", "", None, "ünïcode ✓", "a", "long " * 40, "a"], pa.string()),
        "i32": pa.array([1, -2, None, 2147483647, -2147483648, 0, 7], pa.int32()),
        "i64": pa.array([None, -9007199254740993, 5, 0, 1, 2, 3], pa.int64()),
        "f32": pa.array([0.5, None, -1.25, 3.0, 0.0, 1e-3, 2.5], pa.float32()),
        "f64": pa.array([0.1, 2.5e300, None, -0.0, 1.0, 3.14159, -7.5], pa.float64()),
        "flag": pa.array([True, False, None, True, True, False, True], pa.bool_()),
        "ints": pa.array([[1, 2], [], None, [None, 3], [4], [5, 6, 7], [8]],
                         pa.list_(pa.int64())),
        "messages": pa.array([
            [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}],
            [], None, [None, {"role": "user", "content": None}],
            [{"role": "user", "content": "x"}], [{"role": None, "content": "y"}],
            [{"role": "assistant", "content": "z"}]],
            pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))),
        "info": pa.array([
            {"index": 1, "tags": ["a", "b"], "inner": {"x": 1.5}},
            None, {"index": None, "tags": None, "inner": None},
            {"index": 4, "tags": [], "inner": {"x": None}},
            {"index": 5, "tags": [None], "inner": {"x": 2.0}},
            {"index": 6, "tags": ["c"], "inner": {"x": 3.0}},
            {"index": 7, "tags": ["d", "e", "f"], "inner": {"x": 4.0}}],
            pa.struct([("index", pa.int64()), ("tags", pa.list_(pa.string())),
                       ("inner", pa.struct([("x", pa.float64())]))])),
        "grid": pa.array([[["a"], ["b", "c"]], [[]], None, [None, ["d"]], [], [["e"]], [["f"]]],
                         pa.list_(pa.list_(pa.string()))),
        "label": pa.array(["x", "y", "x", "x", "y", None, "x"], pa.string()),
    })


# The row fixtures, by name, for writing some of them only.
FIXTURE_ROWS = {"gsm8k_verl": gsm8k_rows, "trl_preferences": trl_preference_rows}


def write(out, name, table, expected=True, **options):
    path = os.path.join(out, name + ".parquet")
    pq.write_table(table, path, **options)
    print(f"{path}: {os.path.getsize(path)} bytes, {options}")
    if not expected:
        return
    back = pq.read_table(path).to_pylist()
    with open(os.path.join(out, name + ".jsonl"), "w", encoding="utf-8") as f:
        for row in back:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def main():
    out = sys.argv[1]
    only = set(sys.argv[2:])  # fixture names to write; none: all
    os.makedirs(out, exist_ok=True)
    print("pyarrow", pa.__version__)
    if only:
        for name in only:
            write(out, name, pa.Table.from_pylist(FIXTURE_ROWS[name]()))
        return
    write(out, "gsm8k_verl", pa.Table.from_pylist(gsm8k_rows()))
    write(out, "trl_preferences", pa.Table.from_pylist(trl_preference_rows()))
    table = typed_table()
    write(out, "typed_snappy", table)  # pyarrow's defaults: snappy, dictionaries, v1 pages
    write(out, "typed_plain", table, compression="NONE", use_dictionary=False)
    write(out, "typed_v2_pages", table, compression="SNAPPY", data_page_version="2.0")
    write(out, "typed_gzip", table, compression="GZIP")
    write(out, "typed_zstd", table, compression="ZSTD")  # polars' default
    write(out, "typed_v2_zstd", table, compression="ZSTD", data_page_version="2.0")
    write(out, "typed_small_pages", table, compression="NONE", data_page_size=16,
          write_batch_size=2, row_group_size=3, dictionary_pagesize_limit=8)
    write(out, "typed_v2_small_pages", table, compression="SNAPPY", data_page_version="2.0",
          data_page_size=16, write_batch_size=2, row_group_size=3, use_dictionary=False)
    long_text = pa.table({"text": pa.array(["abcdefgh" * 200 + str(i) for i in range(30)] +
                                           ["x" * 70000])})
    write(out, "long_text_snappy", long_text)  # snappy copies with long offsets
    # What the reader turns down with a clear error: no rows to compare.
    write(out, "unsupported_brotli", pa.table({"a": [1, 2]}), False, compression="BROTLI")
    write(out, "unsupported_delta", pa.table({"a": pa.array([1, 2, 3], pa.int64())}), False,
          use_dictionary=False, column_encoding={"a": "DELTA_BINARY_PACKED"})
    write(out, "unsupported_map", pa.table({"m": pa.array([[("k", 1)]],
                                                          pa.map_(pa.string(), pa.int64()))}), False)


if __name__ == "__main__":
    main()
