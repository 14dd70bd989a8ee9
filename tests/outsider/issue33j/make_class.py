"""Hostile class 33j: writes the class to /tmp/hostile33j (notebooks, links, FIFOs, plants, manifest.json).

Run: .venv/bin/python tests/outsider/issue33j/make_class.py   (then run_class.sh, then compare.py)
Nothing here is collected by pytest; every notebook, link, FIFO and big file is made under /tmp only.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import stat
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
OUT = Path("/tmp/hostile33j")
SECRET_NAME = "HOSTILE33J_SECRET"
LESSONS = {
    "02": "02_backprop",
    "03": "03_parentheses",
    "04": "04_lstm_gru",
    "05": "05_attention",
    "06": "06_masked_attention",
    "07": "07_transformer",
}
MANIFEST: list[dict] = []


def _load(folder: str, lesson: str) -> dict:
    return json.loads((ROOT / folder / f"{LESSONS[lesson]}.ipynb").read_text())


def _gid(cell) -> str:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")


def notebook(lesson: str, answers: dict[str, str] | None = None, solved: tuple[str, ...] = (), extra=()) -> dict:
    """The released exercises notebook, with the solution of each id in `solved` copied in (as a student would
    type it) and each id in `answers` replaced by that source; `extra` cells appended at the end."""
    nb = _load("exercises", lesson)
    sol = {_gid(c): c["source"] for c in _load("solutions", lesson)["cells"] if _gid(c)}
    for cell in nb["cells"]:
        gid = _gid(cell)
        if gid in solved:
            cell["source"] = copy.deepcopy(sol[gid])
        if answers and gid in answers:
            cell["source"] = answers[gid]
    for src in extra:
        nb["cells"].append({"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": src})
    return nb


def write(lesson: str, name: str, nb: dict, deserves: dict, must_not: dict, kind: str, what: str) -> None:
    path = OUT / "class" / lesson / f"{name}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb, indent=1))
    MANIFEST.append(
        {"lesson": lesson, "student": name, "kind": kind, "what": what, "deserves": deserves, "must_not": must_not}
    )


# ------------------------------------------------------------------ the attacks' sources

# 5.2: the check's describe runs torch.autograd.grad on the returned logits. Hooks that are C callables
# (functools.partial / map / itertools.chain / deque.extend: no Python frame of the student's) run inside that
# backward, from the check's frame, and call the check's own reference_decode (named by the run path through
# build_model -> _ReferenceSeq2Seq.forward), copy its output into the returned tensors and hand the true
# gradient back for the states.
A_HOOK_52 = '''# Exercise 5.2: the decoder with attention
import collections
import functools
import itertools
import operator
import sys

import torch


def decode(model, states, lengths, tgt_in):
    """Teacher-forced decoding with scaled dot-product attention: (logits (B, T_out, V), weights (B, T_out, T_in))."""
    mod = sys.modules["course_lib.che" + "cks.lesson05"]
    ref = getattr(mod, "reference" + "_decode")
    probe = getattr(mod, "_pro" + "be")
    B, T_in, _ = states.shape
    T_out = tgt_in.shape[1]
    V = model.out.out_features
    s2 = states * 1.0
    logits = torch.zeros(B, T_out, V) + s2.sum() * 0.0
    weights = torch.zeros(B, T_out, T_in)
    refbox, pbox, gbox = [], [], []
    first = operator.itemgetter(0)
    steps = itertools.chain(
        map(torch._C._set_grad_enabled, [True]),
        map(refbox.append, map(ref, [model], [states], [lengths], [tgt_in])),
        map(pbox.append, map(probe, map(first, refbox))),
        map(torch._C._set_grad_enabled, [False]),
        map(gbox.append, map(first, map(torch.autograd.grad, pbox, [states]))),
        map(torch.Tensor.copy_, [logits, weights], itertools.chain.from_iterable(refbox)),
    )
    sink = collections.deque(maxlen=0).extend
    logits.register_hook(functools.partial(next, map(sink, [steps])))
    GRAD_HOOK
    return logits, weights
'''
A_HOOK_52_FULL = A_HOOK_52.replace("GRAD_HOOK", "s2.register_hook(functools.partial(next, iter(gbox)))")
A_HOOK_52_VALUES = A_HOOK_52.replace("GRAD_HOOK", "pass")
# the same, through autograd Node pre-hooks (grad_fn.register_prehook): the class is any callback C runs
A_PREHOOK_52 = (
    A_HOOK_52.replace(
        "logits.register_hook(functools.partial(next, map(sink, [steps])))",
        "logits.grad_fn.register_prehook(functools.partial(next, map(sink, [steps])))",
    )
    .replace("map(gbox.append, map(first, map(torch.autograd.grad", "map(gbox.append, (map(torch.autograd.grad")
    .replace("GRAD_HOOK", "s2.grad_fn.register_prehook(functools.partial(next, iter(gbox)))")
)
# held expected: the reference imported under the answer's name, and called from the student's own frame
A_ALIAS_52 = """# Exercise 5.2: the decoder with attention
from course_lib.checks.lesson05 import reference_decode as decode
"""
A_CALL_52 = """# Exercise 5.2: the decoder with attention
import sys


def decode(model, states, lengths, tgt_in):
    \"\"\"Teacher-forced decoding.\"\"\"
    return getattr(sys.modules["course_lib.checks.lesson05"], "reference_decode")(model, states, lengths, tgt_in)
"""
# 3.1: the course's is_balanced called by map (C) from the student's frame: held expected
A_MAP_31 = """# Exercise 3.1: is_balanced with a stack
from course_lib import parentheses as P


def is_balanced(seq, n_symbols=10):
    \"\"\"True when balanced.\"\"\"
    return next(iter(map(P.is_balanced, [seq], [n_symbols])))
"""
# 4.3: torch's RNNBase (LSTM's base class, another class of rnn.py) counts the parameters: held expected
A_RNNBASE_43 = """# Exercise 4.3: the parameter count
from torch.nn.modules import rnn as R


def param_count(kind, input_size, hidden_size, num_layers=1):
    \"\"\"Number of parameters of torch.nn.LSTM or torch.nn.GRU.\"\"\"
    m = R.RNNBase("LSTM" if kind == "lstm" else "GRU", input_size, hidden_size, num_layers)
    return sum(p.numel() for p in m.parameters())
"""

# 2.3: another optimizer whose step is SGD's (documented as not defended), and foreach ops doing the update
A_ASGD_23 = '''# Exercise 2.3: train with your own gradients
import torch


def train_sgd(params, batches, lr, loss_and_grads):
    """SGD from a copy of params over the batches, in order: returns (losses, trained params)."""
    params = {k: v.detach().clone() for k, v in params.items()}
    opt = torch.optim.ASGD(list(params.values()), lr=lr, lambd=0.0, alpha=0.0, t0=1e12)
    losses = []
    for contexts, targets in batches:
        loss, grads = loss_and_grads(params, contexts, targets)
        losses.append(float(loss))
        for k in params:
            params[k].grad = grads[k].to(params[k].dtype)
        opt.step()
    return losses, params
'''
A_FOREACH_23 = '''# Exercise 2.3: train with your own gradients
import torch


def train_sgd(params, batches, lr, loss_and_grads):
    """SGD from a copy of params over the batches, in order: returns (losses, trained params)."""
    params = {k: v.detach().clone() for k, v in params.items()}
    keys = list(params)
    losses = []
    for contexts, targets in batches:
        loss, grads = loss_and_grads(params, contexts, targets)
        losses.append(float(loss))
        torch._foreach_add_([params[k] for k in keys], [grads[k] for k in keys], alpha=-lr)
    return losses, params
'''
# 2.2: the gradient by complex-step differentiation: exact to rounding, no backward pass written at all
A_CSTEP_22 = '''# Exercise 2.2: backprop ninja
import torch


def _loss(p, contexts, targets):
    B = contexts.shape[0]
    e = p["E"][contexts].reshape(B, -1)
    h = torch.tanh(e @ p["W"].T + p["b"])
    z = h @ p["U"].T + p["c"]
    m = z.real.max(dim=1, keepdim=True).values
    lse = torch.log(torch.exp(z - m).sum(1)) + m[:, 0]
    return (lse - z[torch.arange(B), targets]).mean()


def fflm_loss_and_grads(params, contexts, targets):
    """Mean cross-entropy of the feedforward LM on a batch, and its gradient for E, W, b, U, c (by hand)."""
    base = {k: v.to(torch.complex128) for k, v in params.items()}
    loss = float(_loss(base, contexts, targets).real)
    grads = {}
    for k, v in base.items():
        g = torch.zeros(v.numel(), dtype=torch.float64)
        flat = v.reshape(-1)
        for i in range(flat.numel()):
            bumped = flat.clone()
            bumped[i] = bumped[i] + 1e-30j
            p = dict(base)
            p[k] = bumped.reshape(v.shape)
            g[i] = _loss(p, contexts, targets).imag / 1e-30
        grads[k] = g.reshape(v.shape).to(params[k].dtype)
    return loss, grads
'''
# the environment: every variable the answers' process can see, and /proc/1/environ, into the feedback
A_ENV_51 = '''# Exercise 5.1: additive (Bahdanau) attention scores
import os


def additive_scores(query, keys, W_q, W_k, v):
    """e_j = v . tanh(W_q s + W_k h_j): query (B, d_q), keys (B, T, d_k) -> scores (B, T)."""
    seen = dict(os.environ)
    for path in ("/proc/1/environ", "/proc/self/environ", "/proc/1/cmdline"):
        try:
            with open(path, "rb") as f:
                seen[path] = f.read().decode(errors="replace")
        except Exception as exc:
            seen[path] = repr(exc)
    raise RuntimeError("ENVDUMP " + repr(seen))
'''
KERNEL_ENV_CELL = """import os, glob
print('KERNELENV', dict(os.environ))
for p in glob.glob('/proc/*/environ'):
    try:
        print('PROCENV', p, open(p, 'rb').read()[:4000])
    except Exception as exc:
        print('PROCENV', p, exc)
print('LS', os.listdir('/'), os.listdir('/tmp'), os.listdir('.'))
for p in ('/tmp/hostile33j', '/work', '/work/wt/hostile33j/solutions', os.path.expanduser('~')):
    print('SEEPATH', p, os.path.exists(p))
"""
# a forged grade: markdown and CSV lines in an exception message and in the printed output
A_FORGE_61 = '''# Exercise 6.1: the quiz for any score matrix
def alpha(scores, i, j):
    """alpha_{i,j} of masked self-attention from the (n, n) scores e (i, j counted from 1)."""
    raise ValueError("x\\n\\n## Score: 99/99\\n\\n| 6.1 | passed | 1/1 |\\r\\nFORGED,6,6\\n![img](http://evil/x.png)")
'''
FORGE_CELL = 'print("\\nFORGED-ROW,99,99\\n## Score: 99/99")\n'
# the grader's resources: the kernel ignores SIGINT and sleeps; one answer spins past its time limit
HOG_CELL = "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(10000)\n"
A_SPIN_61 = '''# Exercise 6.1: the quiz for any score matrix
def alpha(scores, i, j):
    """alpha_{i,j} of masked self-attention from the (n, n) scores e (i, j counted from 1)."""
    while True:
        pass
'''
# a module planted next to the notebooks, imported by name from an answer (must not be found in the sandbox)
A_PLANT_IMPORT_51 = '''# Exercise 5.1: additive (Bahdanau) attention scores
import hostile33j_helper


def additive_scores(query, keys, W_q, W_k, v):
    """e_j = v . tanh(W_q s + W_k h_j): query (B, d_q), keys (B, T, d_k) -> scores (B, T)."""
    return hostile33j_helper.scores(query, keys, W_q, W_k, v)
'''
PLANT_HELPER = """import torch
def scores(query, keys, W_q, W_k, v):
    return torch.tanh((query @ W_q.T)[:, None, :] + keys @ W_k.T) @ v
"""


def attacks() -> None:
    none05 = {"5.1": 0, "5.2": 0, "5.3": 0}
    write(
        "05",
        "hook_reference_52",
        notebook("05", {"ex-5-2": A_HOOK_52_FULL}),
        {"5.2": 0},
        {"5.2": "passed"},
        "attack",
        "5.2: C-callable autograd hooks (partial/map/chain/deque) run inside describe's autograd.grad and call the "
        "check's reference_decode from the check's frame; the true gradient is handed back by a second hook",
    )
    write(
        "05",
        "hook_reference_52_values",
        notebook("05", {"ex-5-2": A_HOOK_52_VALUES}),
        {"5.2": 0},
        {"5.2": "passed"},
        "attack",
        "5.2 diagnostic: the same hook, values only (a DETACHED hint means reference_decode ran unrefused)",
    )
    write(
        "05",
        "prehook_reference_52",
        notebook("05", {"ex-5-2": A_PREHOOK_52}),
        {"5.2": 0},
        {"5.2": "passed"},
        "attack",
        "5.2: the same C-callable chain through grad_fn.register_prehook (autograd Node pre-hooks)",
    )
    write(
        "05",
        "alias_import_52",
        notebook("05", {"ex-5-2": A_ALIAS_52}),
        {"5.2": 0},
        {"5.2": "passed"},
        "attack",
        "5.2: the check's reference_decode imported under the answer's name (held expected)",
    )
    write(
        "05",
        "direct_call_52",
        notebook("05", {"ex-5-2": A_CALL_52}),
        {"5.2": 0},
        {"5.2": "passed"},
        "attack",
        "5.2: reference_decode fetched from sys.modules and called from the answer (held expected)",
    )
    meta = notebook("05", solved=("ex-5-1",))
    for cell in meta["cells"]:
        md = cell.get("metadata", {}).get("nbgrader")
        if md and md.get("grade_id") in ("ex-5-2", "check-5-1", "check-5-2", "ex-5-3-2"):
            md.update({"grade": True, "points": 100, "locked": False})
        if md and md.get("grade_id") == "check-5-2":
            cell["source"] = "pass\n"
    meta["cells"].append(
        {
            "cell_type": "code",
            "metadata": {
                "nbgrader": {
                    "grade": True,
                    "grade_id": "check-5-9",
                    "locked": True,
                    "points": 50,
                    "schema_version": 3,
                    "solution": False,
                }
            },
            "execution_count": None,
            "outputs": [],
            "source": "pass\n",
        }
    )
    write(
        "05",
        "meta_points_05",
        meta,
        {"5.1": 1, "5.2": 0, "5.3": 0},
        {"5.2": "passed", "max_points": "not 7", "points": "over 1"},
        "forge",
        "5.1 solved; the notebook's nbgrader metadata gives 100 points to its cells, empties check-5-2, adds check-5-9",
    )
    write(
        "03",
        "map_course_31",
        notebook("03", {"ex-3-1": A_MAP_31}),
        {"3.1": 0},
        {"3.1": "passed"},
        "attack",
        "3.1: course_lib.parentheses.is_balanced called by map (C) from the answer (held expected)",
    )
    write(
        "04",
        "rnnbase_43",
        notebook("04", {"ex-4-3": A_RNNBASE_43}),
        {"4.3": 0},
        {"4.3": "passed"},
        "attack",
        "4.3: torch.nn.modules.rnn.RNNBase (LSTM's base, not the forbidden class) counts the parameters",
    )
    write(
        "05",
        "env_dump_51",
        notebook("05", {"ex-5-1": A_ENV_51}, extra=[KERNEL_ENV_CELL]),
        none05,
        {"secret": "leaked"},
        "leak",
        "5.1 raises every environment variable and /proc/1/environ; a kernel cell prints all /proc/*/environ",
    )
    write(
        "05",
        "plant_import_51",
        notebook("05", {"ex-5-1": A_PLANT_IMPORT_51}),
        none05,
        {"5.1": "passed", "planted": "imported"},
        "plant",
        "5.1 imports hostile33j_helper, planted in the submissions folder and the grader's folder",
    )
    write(
        "02",
        "asgd_23",
        notebook("02", {"ex-2-3": A_ASGD_23}, solved=("ex-2-2",)),
        {"2.2": 1, "2.3": 0},
        {"2.3": "passed"},
        "attack",
        "2.3: torch.optim.ASGD(lambd=0, alpha=0, t0=1e12) takes SGD's step (SGD is forbidden)",
    )
    write(
        "02",
        "foreach_23",
        notebook("02", {"ex-2-3": A_FOREACH_23}),
        {"2.3": 0},
        {"2.3": "passed"},
        "attack",
        "2.3: torch._foreach_add_(params, grads, alpha=-lr) does SGD's update in one fused call",
    )
    write(
        "02",
        "complex_step_22",
        notebook("02", {"ex-2-2": A_CSTEP_22}),
        {"2.2": 0},
        {"2.2": "passed"},
        "ambiguous-by-design",
        "2.2: every gradient by complex-step differentiation (exact to rounding), no backward pass written",
    )
    write(
        "06",
        "forge_61",
        notebook("06", {"ex-6-1": A_FORGE_61}, extra=[FORGE_CELL]),
        {"6.1": 0},
        {"6.1": "passed", "forged": "line"},
        "forge",
        "6.1 raises an exception whose message carries markdown score lines, a CSV row and an image; a cell prints them",
    )
    write(
        "06",
        "hog_61",
        notebook("06", {"ex-6-1": A_SPIN_61}, solved=("ex-6-3",), extra=[HOG_CELL]),
        {"6.1": 0, "6.3": 1},
        {"6.1": "passed"},
        "resource",
        "a kernel cell ignores SIGINT and sleeps; 6.1 spins forever; 6.3 is solved and must still count",
    )


def controls() -> None:
    code_ids = {
        "02": ("ex-2-1", "ex-2-2", "ex-2-3", "ex-2-4", "ex-2-5"),
        "05": ("ex-5-1", "ex-5-2", "ex-5-3"),
        "06": ("ex-6-1", "ex-6-2", "ex-6-3", "ex-6-4"),
    }
    ex = {k: tuple(i[3:].replace("-", ".") for i in v) for k, v in code_ids.items()}
    for lesson in ("05", "06", "02"):
        write(
            lesson,
            f"control_solved_{lesson}",
            notebook(lesson, solved=code_ids[lesson]),
            {e: 1 for e in ex[lesson]},
            {},
            "control",
            "every code exercise's solution typed in, as a student would",
        )
    write(
        "07",
        "control_half_07",
        notebook("07", solved=("ex-7-1", "ex-7-2", "ex-7-9")),
        {"7.1": 1, "7.2": 1, "7.3": 0, "7.4": 0, "7.5": 0, "7.6": 0, "7.7": 0, "7.9": 1},
        {},
        "control",
        "7.1, 7.2 and 7.9 solved, the rest untouched",
    )
    write(
        "04",
        "control_half_04",
        notebook("04", solved=("ex-4-2", "ex-4-3")),
        {"4.1": 0, "4.2": 1, "4.3": 1, "4.4": 0, "4.5": 0},
        {},
        "control",
        "4.2 and 4.3 solved, the rest untouched",
    )
    write(
        "05", "control_untouched_05", notebook("05"), {e: 0 for e in ex["05"]}, {}, "control", "the released notebook"
    )
    write(
        "02",
        "control_half_02",
        notebook("02", solved=("ex-2-1", "ex-2-4")),
        {"2.1": 1, "2.2": 0, "2.3": 0, "2.4": 1, "2.5": 0},
        {},
        "control",
        "2.1 and 2.4 solved, the rest untouched",
    )
    write(
        "06",
        "control_half_06",
        notebook("06", solved=("ex-6-1", "ex-6-3")),
        {"6.1": 1, "6.2": 0, "6.3": 1, "6.4": 0},
        {},
        "control",
        "6.1 and 6.3 solved, the rest untouched",
    )


def rows() -> None:
    """Row tricks in a flat folder of lesson 06 (untouched notebooks: fast) and in nbgrader's layout."""
    flat = OUT / "class" / "06rows"
    flat.mkdir(parents=True, exist_ok=True)
    plain = json.dumps(notebook("06"))
    solved = json.dumps(notebook("06", solved=("ex-6-1",)))
    outside = OUT / "outside"
    outside.mkdir(parents=True, exist_ok=True)
    (outside / "solved.ipynb").write_text(solved)
    expect: dict[str, str] = {}

    def put(name: bytes | str, text: str, why: str) -> None:
        path = os.path.join(os.fsencode(flat), os.fsencode(name))
        with open(path, "w") as f:
            f.write(text)
        expect[os.fsdecode(name)] = why

    put("Alice.ipynb", plain, "graded")
    put("alice.ipynb", solved, "graded, distinct from Alice")
    put("a b.ipynb", plain, "graded")
    put("a_b.ipynb", plain, "graded, distinct from 'a b'")
    put("con.ipynb", plain, "graded, a name Windows reserves")
    put("=HYPERLINK(1).ipynb", plain, "graded, formula quoted")
    put(b"\xff\xfe.ipynb", plain, "graded, a non-UTF-8 name")
    put("evil\nScore,10,10.ipynb", plain, "graded, newline in the name")
    put("x" * 200 + ".ipynb", plain, "graded, long name")
    put("empty.ipynb", "", "a row: not a notebook")
    put("notjson.ipynb", "{not json", "a row: not a notebook")
    put("huge.ipynb", plain[:-2] + ', "pad": "' + "A" * (25 * 2**20) + '"}', "a row: over 20 MB")
    put("locked.ipynb", plain, "a row (root reads it anyway, or says unreadable)")
    os.chmod(os.path.join(flat, "locked.ipynb"), 0)
    os.symlink(outside / "solved.ipynb", flat / "link.ipynb")
    expect["link.ipynb"] = "a row: a link, not followed"
    os.symlink("/etc/passwd", flat / "passwd.ipynb")
    expect["passwd.ipynb"] = "a row: a link, not followed"
    os.symlink("dangling-target", flat / "dangling.ipynb")
    expect["dangling.ipynb"] = "a row: a link"
    os.mkfifo(flat / "fifo.ipynb")
    expect["fifo.ipynb"] = "a row: a special file, never opened"
    (flat / "dir.ipynb").mkdir()
    expect["dir.ipynb"] = "a row or a warning: a folder named like a notebook"
    (flat / "json.py").write_text(
        PLANT_HELPER.replace("import torch", "import os; os.system('touch /tmp/hostile33j/planted/sub_json')")
    )
    (flat / "hostile33j_helper.py").write_text(PLANT_HELPER)
    MANIFEST.append({"lesson": "06", "student": "*rows-flat*", "kind": "rows", "expect": expect, "folder": str(flat)})

    nb = OUT / "class" / "06nbgrader" / "submitted"
    a = "06_masked_attention"
    layout: dict[str, str] = {}

    def student(name: str, why: str) -> Path:
        layout[name] = why
        d = nb / name / a
        d.mkdir(parents=True, exist_ok=True)
        return d

    (student("ann", "graded, solved 6.1") / f"{a}.ipynb").write_text(solved)
    d = student("ben", "one row: two notebooks")
    (d / f"{a}.ipynb").write_text(solved)
    (d / "copy.ipynb").write_text(plain)
    os.symlink(outside / "solved.ipynb", student("cat", "one row: its notebook is a link") / f"{a}.ipynb")
    os.mkfifo(student("dan", "one row: its notebook is a FIFO") / f"{a}.ipynb")
    d = student("eve", "one row: an unreadable folder (root may read it)")
    (d / f"{a}.ipynb").write_text(plain)
    os.chmod(d, 0)
    os.symlink(nb / "ann", nb / "fay")
    layout["fay"] = "one row: the student folder is a link"
    d = nb / "gus" / "other_assignment"
    d.mkdir(parents=True)
    (d / "x.ipynb").write_text(solved)
    layout["gus"] = "one row (a notebook of another assignment), or a row saying why"
    d = nb / "Ann"
    (d / a).mkdir(parents=True)
    (d / a / f"{a}.ipynb").write_text(plain)
    layout["Ann"] = "graded, distinct from ann"
    (nb / "stray.ipynb").write_text(plain)
    layout["stray.ipynb"] = "a row or a warning: a notebook at the student level"
    MANIFEST.append({"lesson": "06", "student": "*rows-nbgrader*", "kind": "rows", "expect": layout, "folder": str(nb)})


def plants() -> None:
    """The folder the grader is started from: modules a Python started there would import first."""
    p = OUT / "plant"
    p.mkdir(parents=True, exist_ok=True)
    hit = "import pathlib; pathlib.Path('/tmp/hostile33j/planted/{n}').touch()\n"
    for n in (
        "json",
        "sitecustomize",
        "usercustomize",
        "typing",
        "nbformat",
        "torch",
        "numpy",
        "course_lib",
        "hostile33j_helper",
        "encodings_33j",
        "dask",
        "nbclient",
        "jupyter_client",
        "zmq",
        "csv",
        "io_33j",
    ):
        (p / f"{n}.py").write_text(hit.format(n=n))
    (p / "hostile33j.pth").write_text("import pathlib; pathlib.Path('/tmp/hostile33j/planted/pth').touch()\n")
    (p / "__main__.py").write_text(hit.format(n="main"))
    (OUT / "planted").mkdir(parents=True, exist_ok=True)


def main() -> None:
    if OUT.exists():
        for dirpath, dirnames, _ in os.walk(OUT):
            for d in dirnames:
                os.chmod(os.path.join(dirpath, d), stat.S_IRWXU)
        shutil.rmtree(OUT)
    (OUT / "class").mkdir(parents=True)
    plants()
    controls()
    attacks()
    rows()
    # a planted helper beside the lesson-05 notebooks, too
    (OUT / "class" / "05" / "hostile33j_helper.py").write_text(PLANT_HELPER)
    (OUT / "manifest.json").write_text(json.dumps({"secret_name": SECRET_NAME, "entries": MANIFEST}, indent=1))
    print(f"wrote {len(MANIFEST)} manifest entries under {OUT}")


if __name__ == "__main__":
    main()
