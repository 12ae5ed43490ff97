"""vforge.load(config, resume=False): as the CLI, resuming is opt-in (issue 20).  A load stopped
part-way (here by its progress callback) leaves its state; a second load without resume=True is
refused with vforge's message, resume=True continues it and the collection holds every row."""
import json
import textwrap

import pytest

import vforge


def test_resume_is_opt_in(corpus, tmp_path):
    cfg = tmp_path / "load.yaml"
    cfg.write_text(textwrap.dedent(f"""\
        vectors:
          emb: {{type: dense, column: emb, distance: cosine}}
        datasource:
          uri: {corpus}
          payload_fields: {{text: text}}
        vectorstore: {{type: local, path: {tmp_path / 'store'}, collection_name: ex}}
        loader: {{batch_size: 100, prefetch_size: 200, concurrency: 1}}
        """))

    def stop(ev):
        if ev["phase"] == "load" and ev["rows_done"] >= 500:
            raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        vforge.load(str(cfg), progress=stop)
    with pytest.raises(vforge.UsageError, match="a load state exists.*--resume") as e:
        vforge.load(str(cfg))
    assert e.value.exit_code == 2
    # the raw call also returns what finalize verified: the points stored against the corpus's
    js, verified, stored, expected = vforge._vforge.load(str(cfg), "run", True)
    assert verified and stored == expected == 6000, (verified, stored, expected, json.loads(js))
    q = vforge.generate_queries(corpus, 20, output=str(tmp_path / "q.parquet"))
    gt = vforge.brute_force(corpus, q, 10, output=str(tmp_path / "gt.parquet")).path
    assert vforge.bench(str(cfg), queries=q, ground_truth=gt, k=10)["recall"] == 1.0
