"""Lesson 07's n-gram baseline: character Kneser-Ney n-grams of every order until the perplexity turns.

    .venv/bin/python scripts/ngram_orders.py --out-dir my_ngrams                   # orders 1 to 10
    .venv/bin/python scripts/ngram_orders.py --orders 9 --out-dir part9          # one order (to spread the work)
    .venv/bin/python scripts/ngram_orders.py --merge part* --replace-shipped     # one file from the parts

Each order is lesson 01's ``NGramLM(order, smoothing="kneser-ney")`` fitted on the State of the Union
training sentences as characters, scored on the whole validation split and on the first validation
sentences that lesson 07 scores every model on (``course_lib.buildup.val_head``). Fitting an order
above 6 takes minutes, longer than lesson 07 can spend, so the lesson reads this file
(``course_lib/weights/ngram_orders_sotu_char.json``) and refits one cheap order live to check it.
Order 10 is the highest an ``NGramLM`` of this vocabulary allows (its n-gram keys need V**order < 2**63).
Without ``--out-dir`` or ``--replace-shipped`` it stops: the default folder holds the file lesson 07 reads.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from course_lib import checkpoint
from course_lib.buildup import val_head
from course_lib.corpora import load_sotu
from course_lib.ngram import NGramLM

NAME = "ngram_orders_sotu_char.json"


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, nargs="+", default=list(range(1, 11)))
    parser.add_argument("--out-dir", default=str(checkpoint.WEIGHTS_DIR))
    parser.add_argument("--replace-shipped", action="store_true", help="allow overwriting the course's shipped file")
    parser.add_argument("--merge", nargs="+", metavar="DIR", help="merge the files written in these folders")
    args = parser.parse_args(argv)
    out = Path(args.out_dir) / NAME
    checkpoint.refuse_to_replace_shipped(out, replace_shipped=args.replace_shipped, option="--out-dir")
    if args.merge:
        parts = [json.loads((Path(d) / NAME).read_text()) for d in args.merge]
        record = parts[0] | {"orders": {}}
        for part in parts:
            record["orders"] |= part["orders"]
        record["orders"] = dict(sorted(record["orders"].items(), key=lambda kv: int(kv[0])))
    else:
        corpus = load_sotu(level="char")
        head = val_head(corpus.val)
        record = {"smoothing": "kneser-ney", "head_sentences": len(head), "orders": {}}
        for n in args.orders:
            start = time.process_time()
            lm = NGramLM(n, smoothing="kneser-ney").fit(corpus.train)
            record["orders"][str(n)] = {
                "val_perplexity": lm.perplexity(corpus.val),
                "head_perplexity": lm.perplexity(head),
                "cpu_seconds": round(time.process_time() - start, 1),
            }
            print(n, record["orders"][str(n)], flush=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1))
    print(f"wrote {out}")
    return record


if __name__ == "__main__":
    main()
