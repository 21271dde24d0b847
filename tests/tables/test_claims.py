"""The papers' claims (src/negcse/resources/claims.csv, negcse.tables.claims): every difference
recomputed from the published numbers, the comparisons the papers make and only those."""

from __future__ import annotations

import pytest

from negcse.tables.claims import (
    ClaimsError,
    load_claims,
    paper_delta,
    paper_llm,
    parse_claims,
    pick,
    published_value,
)

CLAIMS = load_claims()


def test_every_printed_difference_is_the_papers_rows_difference() -> None:
    """Each claim whose two rows are in the published CSVs: delta = method row - baseline row."""
    checked = 0
    for claim in CLAIMS:
        ours = published_value(claim, claim.method_row)
        base = published_value(claim, claim.baseline_row)
        if claim.measure in ("oppn", "cont") or (claim.table == "Table 2" and claim.paper == "una"):
            assert ours is None  # read off a figure, or a row whose checkmarks were lost
            continue
        assert ours is not None and base is not None, claim
        assert claim.delta == pytest.approx(ours - base, abs=0.006), claim
        checked += 1
    assert checked == len(CLAIMS) - 11  # 8 OssCSE split claims, 3 UNA Table 2 ablations


def _pairs() -> set[tuple[str, str, str]]:
    return {c.pair for c in CLAIMS}


def test_comparisons_no_paper_makes_are_not_claims() -> None:
    pairs = _pairs()
    for scale in ("san_scale10", "san_scale30", "san_scale40"):
        assert ("sts", scale, "simcse_dropout15") not in pairs  # Table 7 ranks the scales
        assert ("sts", scale, "simcse_san") in pairs  # ... against the default, scale 20
    assert ("sts", "gcse_wo_stage2", "simcse") not in pairs
    assert not any(c.baseline == "simcse_dropout15" for c in CLAIMS)  # our control
    assert ("sts", "simcse_san", "simcse") in pairs  # SAN Table 3: the SAN authors' SimCSE
    assert ("sts", "una_baseline", "simcse") not in pairs


def test_the_papers_claims_are_all_there() -> None:
    by = {(c.measure, c.method, c.baseline, c.backbone, c.llm): c for c in CLAIMS}
    # UNA Table 2: two ablation rows (72.58 and 73.84 vs 76.14), each single random step at
    # least 2.30 below UNA; random selection and replacement together: a direction only
    for ablation in ("una_random_select", "una_random_replace"):
        assert by[("sts", ablation, "una", "bert-base-uncased", "")].delta == pytest.approx(-2.30)
    both_random = by[("sts", "una_random_both", "una", "bert-base-uncased", "")]
    assert both_random.delta is None and both_random.direction == -1
    # UNA: paraphrases and UNA beat paraphrases alone (.7767 vs .7671; .7820 vs .7768)
    assert by[("sts", "una_both", "una_paraphrase", "bert-base-uncased", "")].delta == 0.96
    assert by[("sts", "una_both", "una_paraphrase", "roberta-base", "")].delta == 0.52
    # UNA Table D7: the ten-seed means (76.98 vs 75.16), not Table 1's seed-42 run
    both = by[("sts", "una_both", "una_baseline", "bert-base-uncased", "")]
    assert (both.table, both.delta) == ("Table D7", 1.82)
    # GCSE vs RankCSE: the text's "1.90" is the mean of the four ChatGLM3-6B differences
    vs_rankcse = [c.delta for c in CLAIMS
                  if c.pair == ("sts", "gcse", "rankcse") and c.llm == "ChatGLM3-6B"]  # fmt: skip
    assert sum(vs_rankcse) / 4 == pytest.approx(1.90, abs=0.005)
    # SAN Table 4 (MTEB classification): the text claims gains for "certain baseline models",
    # the two it prints; its two losses are no claim
    table4 = {c.method: c.delta for c in CLAIMS if c.paper == "san-hince" and c.table == "Table 4"}
    assert table4 == {"simcse_san": 0.45, "rankcse_san": 1.21}
    # GCSE Table 4: "w randomly" is even worse than the evaluation model (77.67 vs 77.89)
    worse = by[("sts", "gcse_w_randomly", "gcse_wo_stage2", "bert-base-uncased", "ChatGLM3-6B")]
    assert worse.delta == -0.22
    # OssCSE Section 5.2's probe: paraphrases 0.79 -> 0.88, negations 0.93 -> 0.87
    assert by[("probe_paraphrase", "osscse", "simcse", "bert-base-uncased", "")].delta == 0.09
    assert by[("probe_negation", "osscse", "simcse", "bert-base-uncased", "")].delta == -0.06
    # OssCSE's Oppn. split gain: around 8 points with RoBERTa, a direction with BERT
    assert by[("oppn", "osscse", "simcse", "roberta-base", "")].delta == 8.0
    bert = by[("oppn", "osscse", "simcse", "bert-base-uncased", "")]
    assert bert.delta is None and bert.direction == 1


def test_a_claim_is_the_runs_backbone_and_llm_or_a_borrowed_direction() -> None:
    gcse = [c for c in CLAIMS if c.pair == ("sts", "gcse", "simcse")]
    claim, why = pick(gcse, "roberta-base", "THUDM/glm-4-9b-chat-hf")
    assert (claim.backbone, claim.llm, claim.delta, why) == ("roberta-base", "GLM4-9B-Chat",
                                                             5.46, [])  # fmt: skip
    claim, why = pick(gcse, "splade-tiny", "smollm2-135m-instruct-q4_1")
    assert (claim.backbone, claim.llm) == ("bert-base-uncased", "ChatGLM3-6B")
    assert why[0] == "backbone splade-tiny is not in the paper"
    assert why[1].startswith("LLM smollm2-135m-instruct-q4_1 is not the paper's")
    sncse = [c for c in CLAIMS if c.pair == ("sts", "sncse", "simcse")]
    assert pick(sncse, "bert-large-uncased", "") == (sncse[1], [])
    assert paper_llm("deepseek-chat") == "Deepseek-V3-0324" and paper_llm("gpt2") is None


def test_transfer_claims_over_fewer_tasks_use_the_papers_means_over_them() -> None:
    claim = next(c for c in CLAIMS if c.measure == "transfer")
    assert paper_delta(claim) == 2.18  # OssCSE Table 5: 87.02 vs 84.84
    # CR and TREC: (88.13 + 88.80) / 2 - (87.74 + 84.60) / 2
    assert paper_delta(claim, ["CR", "TREC"]) == pytest.approx(2.295)


HEADER = ("paper,table,measure,method,baseline,backbone,llm,method_row,baseline_row,delta,"
          "direction,note\n")  # fmt: skip


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("sncse,Table 2,sts,sncse,simcse,bert-base-uncased,,a,b,2.72,-,",
         r"claims\.csv:2: column 'direction': '-' disagrees with delta \+2\.72"),
        ("sncse,Table 2,sts,sncse,simcse,bert-base-uncased,GPT-4,a,b,2.72,+,",
         r"claims\.csv:2: column 'llm': 'GPT-4' is not one of"),
        ("sncse,Table 2,sts,sncse,simcse,tiny,,a,b,2.72,+,",
         r"claims\.csv:2: column 'backbone': 'tiny' is not one of"),
        ("sncse,Table 2,bleu,sncse,simcse,bert-base-uncased,,a,b,2.72,+,",
         r"claims\.csv:2: column 'measure': 'bleu' is not one of"),
    ],
)  # fmt: skip
def test_a_malformed_claim_is_one_error_naming_line_and_column(row: str, message: str) -> None:
    with pytest.raises(ClaimsError, match=message):
        parse_claims(HEADER + row + "\n")


def test_a_claim_listed_twice_is_refused() -> None:
    row = "sncse,Table 2,sts,sncse,simcse,bert-base-uncased,,a,b,2.72,+,\n"
    with pytest.raises(ClaimsError, match="sncse vs simcse .* is listed twice"):
        parse_claims(HEADER + row + row)
