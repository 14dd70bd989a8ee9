"""Writes judgements.json: my one-line judgement of each entry's messages (read from results.jsonl by hand).
named: "yes" (the hint names the mistake or the property that fails), "partly" (names the wrong tensor or
output but not why), "no" (a first difference, a shape or a raw exception only). For borrowed answers:
"yes" when the refusal names what was called."""

import json
from pathlib import Path

J = {}


def j(ids, named, note=""):
    for i in ids.split():
        J[i] = {"named": named, "note": note}


# lesson 02
j("M2.1.1 M2.1.2 M2.1.3", "yes")
j(
    "M2.1.4",
    "no",
    "a first difference (index [0, 0] should be 0.18, got 0.0): nothing says the softmax ran over a length-1 axis",
)
j("M2.2.1 M2.2.2 M2.2.3 M2.2.4 M2.2.5", "yes")
j("M2.2.6", "partly", "names dU, then a first difference; not that it is transposed/reshaped")
j("M2.2.7", "partly", "names dE, then a first difference; not that de was split in the wrong order")
j("M2.3.1 M2.3.2 M2.3.3 M2.3.4 M2.3.5", "yes")
j("M2.4.1 M2.4.2 M2.4.3 M2.4.4", "yes")
j("M2.5.1 M2.5.2 M2.5.3 M2.5.4 M2.5.5 M2.5.6", "yes")
# lesson 03
j("M3.1.1 M3.1.2 M3.1.3 M3.1.4", "yes")
j("M3.2.1 M3.2.2 M3.2.3 M3.2.4 M3.2.5", "yes")
j("M3.3.1 M3.3.2 M3.3.3 M3.3.4 M3.3.5 M3.3.6 M3.3.7", "yes")
j("M3.4.1 M3.4.2 M3.4.3 M3.4.4", "yes")
j("M3.5.1", "yes")
j("M3.5.2 M3.5.3", "yes", "'one accuracy per epoch (4 epochs), got [x]': names the property")
# lesson 04
j("M4.1.1 M4.1.2 M4.1.3 M4.1.5", "yes")
j(
    "M4.1.4",
    "no",
    "ESCAPE: W_hh drawn in (0, k), one sign only, passes every draw (3.3's check catches the same mistake)",
)
j("M4.1.6", "no", "a first difference of (h_t, c_t) over 3 steps; nothing about which gate feeds c_t")
j("M4.1.7", "yes", "names the four parameters and their shapes")
j("M4.2.1 M4.2.2 M4.2.3", "yes")
j("M4.2.4", "no", "a first difference of h_t; nothing about the candidate n_t")
j("M4.3.1 M4.3.2 M4.3.3 M4.3.4", "yes")
j("M4.4.1 M4.4.2 M4.4.3 M4.4.4 M4.4.5", "yes")
j("M4.5.1 M4.5.4", "yes")
j(
    "M4.5.2",
    "no",
    "a first difference of the runs (0.95 wanted, 0.27 got); nothing says train_memory was called instead of the argument",
)
j("M4.5.3", "yes", "names the property: train(T, seed) called with the arguments exchanged")
# lesson 05
j("M5.1.1", "no", "a first difference of the scores; not that W_q was used untransposed")
j("M5.1.2 M5.1.3", "yes")
j("M5.1.4", "no", "a first difference; not that the query was broadcast along the wrong axis")
j("M5.2.1 M5.2.2 M5.2.3", "yes")
j("M5.2.4", "no", "a first difference of alpha; not that the attention used the wrong decoder state")
j("M5.2.5", "yes", "names the padding property with the offending key")
j("M5.2.6", "yes", "names the logits as the wrong part and writes out([h_i^d; c_i]), the order")
j("M5.3.1 M5.3.2 M5.3.3 M5.3.4", "yes")
# lesson 06
j("M6.1.1", "no", "a first difference of alpha_{2,1}; not that i, j are counted from 1")
j("M6.1.2 M6.1.3 M6.1.4 M6.1.5", "yes")
j("M6.2.1 M6.2.2 M6.2.3", "yes")
j("M6.2.4", "partly", "names alpha_33 as wrong and restates the recipe")
j("M6.3.1 M6.3.2 M6.3.3 M6.3.4 M6.3.5 M6.3.6 M6.3.7", "yes")
j(
    "M6.4.1",
    "no",
    "passes every draw; harmless with a right masked_attention (padding queries do not see padded values either), the check never hands in a leaky one",
)
j("M6.4.2 M6.4.3 M6.4.4", "yes")
# lesson 07
j("M7.1.1 M7.1.2 M7.1.3 M7.1.4", "yes")
j("M7.2.1 M7.2.2 M7.2.3", "yes")
j("M7.3.1 M7.3.2 M7.3.3 M7.3.4 M7.3.5 M7.3.6 M7.3.7", "yes")
j("M7.4.1 M7.4.2 M7.4.3 M7.4.4 M7.4.5", "yes")
j("M7.5.1 M7.5.2 M7.5.3 M7.5.4 M7.5.5", "yes")
j("M7.6.1 M7.6.2 M7.6.3 M7.6.4 M7.6.5", "yes")
j("M7.7.1 M7.7.2 M7.7.3 M7.7.4 M7.7.5 M7.7.6 M7.7.7", "yes")
j("M7.9.1 M7.9.2 M7.9.3 M7.9.4 M7.9.5", "yes")

# borrowed answers: every refusal reads "write it yourself: your function may not call `X`"
for i in (
    "B2.1.1 B2.1.2 B2.1.3 B2.1.4 B2.2.1 B2.2.3 B2.2.4 B2.4.1 B2.4.2 B2.5.1 B3.1.1 B3.2.1 B3.3.1 B3.3.2 B3.4.1 "
    "B4.1.1 B4.1.2 B4.2.1 B4.2.2 B4.3.1 B5.1.1 B5.2.1 B5.2.2 B5.2.3 B6.1.1 B6.3.1 B6.3.2 B6.3.3 B6.3.5 "
    "B7.1.1 B7.1.3 B7.3.1 B7.3.2 B7.3.3 B7.3.4 B7.4.2 B7.5.1 B7.6.1 B7.6.2 B7.7.2 B7.9.1"
).split():
    j(i, "yes")
j("B2.2.2", "yes", "names torch.autograd.grad, the call underneath torch.func.grad_and_value")
j("B2.4.3", "yes", "names torch.autograd.grad, the call underneath torch.func.vjp")
j("B4.1.3", "yes", "names torch.lstm_cell, what torch._VF reached")
j("B4.2.3", "yes", "names torch.gru_cell, what torch._VF reached by a string")
j(
    "B7.1.2",
    "yes",
    "names course_lib.transformer.sinusoidal_positions: the same function re-exported by encoder_decoder",
)
j("B7.4.1", "yes", "names F.scaled_dot_product_attention, the kernel under F.multi_head_attention_forward")
j("B7.7.1", "yes", "names course_lib.train.next_token_loss: the same function re-exported by transformer")
j(
    "B6.3.4",
    "no",
    "PASSED every draw and the grader: torch._masked_softmax (a fused masked softmax) is not observed; "
    "borderline (the student built both masks; torch filled and normalised)",
)

if __name__ == "__main__":
    (Path(__file__).parent / "judgements.json").write_text(json.dumps(J, indent=1) + "\n")
