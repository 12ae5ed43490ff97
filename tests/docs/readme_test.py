#!/usr/bin/env python3
"""Executes the code blocks of README.md (issue 14): every ```sh / ```console / ```yaml /
```python / ```pycon block, top to bottom, in one scratch working copy of the repository, so a
block may use what an earlier one made (as a reader following the README would).

  readme_test.py --readme README.md --src REPO --work DIR [--list]

What each kind of block must do to pass:
  sh, bash, shell   the block is a bash script (set -eo pipefail): every command exits 0
  console           `$ ` lines are commands (a trailing `\\` continues one); the lines after a command
                    are its documented stdout: a line `...` matches any number of lines, `...` inside a
                    line matches any text; with `stderr` the documented text is stdout + stderr
  yaml, yml         `vforge load inspect` accepts it: a complete config (top-level `vectors` and
                    `datasource`) as it is, a fragment merged into a template (its top-level keys
                    replace the template's; examples/fashion-mnist.yaml unless `template:` names one)
  python, py        runs with $VF_PY; skipped while `import vforge` fails there
  pycon             `>>>` sessions checked with doctest (ELLIPSIS) by $VF_PY, skipped likewise
  text, json, ...   not executed (output, schemas); a fence without a language is an error

Markers: HTML comments on the lines right above the fence (GitHub renders nothing), one directive
per line, the first after `readme-test:`
  <!-- readme-test: skip: REASON -->          not run; the reason is printed (keep these rare)
  <!-- readme-test: needs: WORD ... -->       skipped, naming what is missing, unless all are here:
                                               s3 hf slurm (tests/services/with-services.sh), qdrant
                                               (the stand-in, started here: QDRANT_URL, QDRANT_API_KEY,
                                               QDRANT_GRPC_PORT when @grpc/grpc-js is installed),
                                               fashion-mnist node h5py numpy pyarrow
  <!-- readme-test: setup: SHELL -->           run first, in the block's shell (readme_fixtures.sh
                                               is sourced: `readme_fixture NAME ARGS`)
  <!-- readme-test: env: NAME=VALUE ... -->    exported first (shell-expanded)
  <!-- readme-test: replace: OLD => NEW -->    the block runs with OLD replaced by NEW (a placeholder
                                               such as https://host); $VAR, ${VAR} and ${VAR:-default}
                                               of the environment are expanded in NEW first, any other
                                               text ($(...)) is left for the shell
  <!-- readme-test: file: PATH -->             the block is also written to PATH for later blocks
  <!-- readme-test: template: PATH -->         YAML fragment: merge into PATH
  <!-- readme-test: check: SHELL -->           YAML: run this instead of `vforge load inspect "$CONFIG"`
                                               ($CONFIG: the complete config, $BLOCK: the block as it
                                               is, for YAML that is not a load config)
  <!-- readme-test: exit: N -->                the block must end with exit status N
  <!-- readme-test: stderr -->                 console: compare stdout + stderr
  <!-- readme-test: timeout: SECONDS -->       default 300
Blocks run with HOME and TMPDIR inside the scratch directory, no ambient AWS_*,
HF_*, QDRANT_*, VFORGE_* or SLURM_* settings (SLURM_CONF kept), and PYTHONPATH=$VF_PYTHONPATH if set.
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

SHELL = {"sh", "bash", "shell", "console"}
YAML = {"yaml", "yml"}
PYTHON = {"python", "py", "pycon"}
TEXT = {"text", "txt", "plain", "output", "log", "json", "jsonl", "ndjson", "csv", "tsv", "diff", "markdown",
        "md", "c", "h", "cpp", "proto", "toml", "ini", "xml", "html", "js", "javascript", "mermaid",
        "make", "makefile", "dockerfile", "sql"}
DIRECTIVES = {"skip", "needs", "setup", "env", "replace", "file", "template", "check", "exit", "stderr", "timeout"}
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^`\s]*)")
MARKER = "readme-test:"
DOC = "README.md"      # the checked file's name, in messages


class ReadmeError(Exception):
    pass


class Block:
    def __init__(self, line, lang, body, directives):
        self.line = line          # 1-based README line of the opening fence
        self.lang = lang
        self.body = body          # list of lines (no newlines)
        self.d = directives       # list of (name, arg)

    def get(self, name):
        return [a for n, a in self.d if n == name]

    def has(self, name):
        return any(n == name for n, _ in self.d)

    def where(self):
        return f"{DOC}:{self.line} ({self.lang})"


def parse_marker(text, line):
    """text: the inside of one <!-- ... --> comment. Returns directives or None (not ours)."""
    t = text.strip()
    if not t.startswith(MARKER):
        if MARKER in t:
            raise ReadmeError(f"{DOC}:{line}: a readme-test marker must start the comment")
        return None
    out = []
    for raw in t[len(MARKER):].split("\n"):
        s = raw.strip()
        if not s:
            continue
        name, _, arg = s.partition(":")
        name, arg = name.strip(), arg.strip()
        if " " in name and not arg:           # `needs s3` written without a colon
            name, _, arg = name.partition(" ")
        if name not in DIRECTIVES:
            raise ReadmeError(f"{DOC}:{line}: unknown readme-test directive '{name}' "
                              f"(known: {', '.join(sorted(DIRECTIVES))})")
        if name != "stderr" and not arg:
            raise ReadmeError(f"{DOC}:{line}: readme-test directive '{name}' needs a value")
        if name in ("exit", "timeout") and not arg.isdigit():
            raise ReadmeError(f"{DOC}:{line}: readme-test '{name}' wants a number, not '{arg}'")
        if name == "replace" and " => " not in arg:
            raise ReadmeError(f"{DOC}:{line}: readme-test 'replace: OLD => NEW' lacks ' => '")
        out.append((name, arg))
    return out


def parse(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    blocks = []
    pending = []          # (first line, last line, directives) of marker comments not yet attached
    i = 0
    while i < len(lines):
        ln = lines[i]
        m = FENCE.match(ln)
        if m:
            fence, lang = m.group(2), m.group(3).lower()
            body = []
            j = i + 1
            indent = len(m.group(1))
            while j < len(lines) and not re.match(r"^\s*" + re.escape(fence[0]) + "{%d,}\\s*$" % len(fence), lines[j]):
                ln_j = lines[j]
                body.append(ln_j[indent:] if ln_j[:indent].strip() == "" else ln_j.lstrip())
                j += 1
            if j == len(lines):
                raise ReadmeError(f"{DOC}:{i + 1}: code fence never closed")
            # markers count only when they sit right above the fence
            directives = []
            if pending and pending[-1][1] == i - 1:
                k = len(pending) - 1
                while k > 0 and pending[k - 1][1] == pending[k][0] - 1:
                    k -= 1
                for p in pending[k:]:
                    directives += p[2]
                pending = pending[:k]
            if pending:
                raise ReadmeError(f"{DOC}:{pending[0][0] + 1}: readme-test marker not directly above a code fence")
            if not lang:
                raise ReadmeError(f"{DOC}:{i + 1}: code fence without a language (use sh, console, "
                                  f"yaml, python, or text for anything not executed)")
            blocks.append(Block(i + 1, lang, body, directives))
            i = j + 1
            continue
        if re.match(r"^ {0,3}<!--", ln):
            start = i
            text = ln[ln.index("<!--") + 4:]
            while "-->" not in text and i + 1 < len(lines):
                i += 1
                text += "\n" + lines[i]
            if "-->" not in text:
                raise ReadmeError(f"{DOC}:{start + 1}: HTML comment never closed")
            d = parse_marker(text[:text.index("-->")], start + 1)
            if d is not None:
                pending.append((start, i, d))
        elif ln.strip() and pending:
            raise ReadmeError(f"{DOC}:{pending[0][0] + 1}: readme-test marker not directly above a code fence")
        i += 1
    if pending:
        raise ReadmeError(f"{DOC}:{pending[0][0] + 1}: readme-test marker not directly above a code fence")
    return blocks


# --- documented output ---------------------------------------------------------------------------

def line_matches(want, got):
    if "..." not in want:
        return want.rstrip() == got.rstrip()
    pat = ".*".join(re.escape(p) for p in want.rstrip().split("..."))
    return re.fullmatch(pat, got.rstrip()) is not None


def output_matches(want, got):
    """want/got: lists of lines; a want line that is exactly `...` matches any run of lines."""
    memo = {}

    def m(i, j):
        key = (i, j)
        if key in memo:
            return memo[key]
        if i == len(want):
            r = j == len(got)
        elif want[i].strip() == "...":
            r = m(i + 1, j) or (j < len(got) and m(i, j + 1))
        else:
            r = j < len(got) and line_matches(want[i], got[j]) and m(i + 1, j + 1)
        memo[key] = r
        return r

    sys.setrecursionlimit(max(10000, 4 * (len(want) + len(got) + 10)))
    return m(0, 0)


def console_steps(body):
    """[(command lines, expected output lines)] from a console block."""
    steps = []
    cmd = None
    cont = False
    for ln in body:
        if cont:
            cmd[0].append(ln)
            cont = ln.rstrip().endswith("\\")
        elif ln.startswith("$ ") or ln.rstrip() == "$":
            cmd = ([ln[2:]], [])
            steps.append(cmd)
            cont = ln.rstrip().endswith("\\")
        elif cmd is None:
            if ln.strip():
                raise ReadmeError("a console block starts with `$ ` (the command); found: " + ln)
        else:
            cmd[1].append(ln)
    for _, out in steps:
        while out and not out[-1].strip():
            out.pop()
    return steps


# --- YAML fragments ------------------------------------------------------------------------------

def top_sections(text):
    """Top-level `key:` sections of a block-style YAML document, in order: [(key, text)]."""
    secs = []
    for ln in text.split("\n"):
        m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)\s*:", ln)
        if m:
            secs.append([m.group(1), ln + "\n"])
        elif secs:
            secs[-1][1] += ln + "\n"
        elif ln.strip() and not ln.lstrip().startswith("#"):
            raise ReadmeError("YAML block: a top-level line that is not `key:`: " + ln)
    return secs


def merge_fragment(template, fragment):
    frag = top_sections(fragment)
    keys = {k for k, _ in frag}
    out = [t for k, t in top_sections(template) if k not in keys]
    return "".join(out) + "".join(t for _, t in frag)


# --- running -------------------------------------------------------------------------------------

class Runner:
    def __init__(self, args):
        self.src = os.path.abspath(args.src)
        self.work = os.path.abspath(args.work)
        self.repo = os.path.join(self.work, "repo")      # the scratch working copy blocks run in
        self.state = os.path.join(self.work, "state")    # scripts, logs, fixture bookkeeping
        self.vforge = os.path.abspath(os.environ["VFORGE"])
        self.py = os.environ.get("VF_PY", "")
        self.results = []                                # (block, status, detail)
        self.qdrant = None
        self.env = None
        self.vforge_py = None

    def prepare(self):
        os.makedirs(self.state, exist_ok=True)
        skip_top = {".git", ".venv", "node_modules"}

        def ignore(d, names):
            top = os.path.abspath(d) == self.src
            return [n for n in names if n in skip_top or (top and n.startswith("build"))]
        # the files git knows (tracked, or untracked and not ignored): no build output, no venv
        ls = subprocess.run(["git", "-C", self.src, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True)
        if ls.returncode == 0 and ls.stdout:
            for rel in sorted(set(ls.stdout.decode().split("\0")) - {""}):
                a = os.path.join(self.src, rel)
                if not os.path.lexists(a) or os.path.isdir(a) and not os.path.islink(a):
                    continue     # deleted in the work tree, or a submodule
                dest = os.path.join(self.repo, rel)
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                shutil.copy2(a, dest, follow_symlinks=False)
        else:
            shutil.copytree(self.src, self.repo, symlinks=True, ignore=ignore)
        os.makedirs(os.path.join(self.repo, "build"), exist_ok=True)
        os.symlink(self.vforge, os.path.join(self.repo, "build", "vforge"))
        bindir = os.path.join(self.state, "bin")
        os.makedirs(bindir)
        os.symlink(self.vforge, os.path.join(bindir, "vforge"))
        home = os.path.join(self.work, "home")
        tmpdir = os.path.join(self.work, "tmp")
        os.makedirs(home)
        os.makedirs(tmpdir)
        env = dict(os.environ)
        for k in list(env):   # nothing ambient decides what a block does
            if (k.startswith(("AWS_", "HF_", "QDRANT_", "VFORGE_")) and k != "VFORGE") or k in ("SKYPILOT_NUM_JOBS", "SKYPILOT_JOB_RANK"):
                del env[k]
            if k.startswith("SLURM_") and k != "SLURM_CONF":
                del env[k]
        env.update(PATH=bindir + os.pathsep + env.get("PATH", "/usr/bin:/bin"), HOME=home, TMPDIR=tmpdir,
                   AWS_EC2_METADATA_DISABLED="true", README_SRC=self.src, README_STATE=self.state,
                   README_REPO=self.repo, VFORGE=self.vforge, LC_ALL="C.UTF-8")
        if os.environ.get("VF_PYTHONPATH"):
            env["PYTHONPATH"] = os.environ["VF_PYTHONPATH"]
        self.env = env
        # what `make demo` leaves in build/demo, which README blocks use (smaller: the test images)
        fx = shlex.quote(os.path.join(self.src, "tests/docs/readme_fixtures.sh"))
        r = subprocess.run(["bash", "-c", f"source {fx} && readme_fixture demo"], cwd=self.repo, env=env,
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise ReadmeError("the build/demo fixture failed: " + r.stderr)

    # what a `needs:` word requires; None when present, else why not
    def missing(self, word):
        e = self.env
        if word == "s3":
            return None if e.get("VF_S3_ENDPOINT") else "needs S3 (radosgw: tests/services/with-services.sh)"
        if word == "hf":
            if not (e.get("VF_HF_ENDPOINT") and e.get("VF_HF_ROOT")):
                return "needs the HF stand-in (nginx: tests/services/with-services.sh)"
            return None if shutil.which("node") else "needs node (HF stand-in listings)"
        if word == "slurm":
            return None if e.get("VF_SLURM") == "1" and shutil.which("sbatch") else "needs Slurm (tests/services/with-services.sh)"
        if word == "qdrant":
            return self.start_qdrant()
        if word == "fashion-mnist":
            return None if os.path.exists("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz") \
                else "needs Fashion-MNIST (Debian dataset-fashion-mnist)"
        if word == "node":
            return None if shutil.which("node") else "needs node"
        if word in ("h5py", "numpy"):
            ok = subprocess.run(["/usr/bin/python3", "-c", "import " + word], capture_output=True).returncode == 0
            return None if ok else f"needs python3-{word}"
        if word == "pyarrow":
            ok = self.py and subprocess.run([self.py, "-c", "import pyarrow"], capture_output=True).returncode == 0
            return None if ok else "needs pyarrow in $VF_PY"
        raise ReadmeError(f"unknown `needs:` word '{word}' (s3 hf slurm qdrant fashion-mnist node h5py numpy pyarrow)")

    def start_qdrant(self):
        if self.qdrant is not None:
            return None if self.qdrant else "needs the Qdrant stand-in (node, ajv, shared/qdrant/openapi.json)"
        self.qdrant = False
        sd = os.path.join(self.src, "tests/services/qdrant-standin")
        shared = os.environ.get("VF_SHARED", os.path.join(self.src, "../shared"))
        openapi = os.path.join(shared, "qdrant/openapi.json")
        oracle = os.path.join(self.src, "tests/oracle")
        if not (shutil.which("node") and os.path.exists(openapi) and os.path.isdir(os.path.join(oracle, "node_modules/ajv"))):
            return self.start_qdrant()
        key = "readme-" + os.urandom(8).hex()
        port_file = os.path.join(self.state, "qdrant.port")
        gport_file = os.path.join(self.state, "qdrant.grpc-port")
        log = open(os.path.join(self.state, "qdrant.log"), "w")
        cmd = ["node", os.path.join(sd, "server.mjs"), "--port", "0", "--port-file", port_file,
               "--openapi", openapi, "--oracle", oracle, "--api-key", key, "--optimize-ms", "50"]
        protos = os.path.join(shared, "qdrant/proto")
        grpc = os.path.isdir(os.path.join(oracle, "node_modules/@grpc/grpc-js")) and os.path.isdir(protos)
        if grpc:  # issue 18: the gRPC side too (vectorstore.prefer_grpc blocks)
            cmd += ["--grpc-port", "0", "--grpc-port-file", gport_file, "--proto", protos]
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        for _ in range(300):
            if os.path.exists(port_file) and open(port_file).read().strip():
                break
            if proc.poll() is not None:
                break
            time.sleep(0.1)
        if proc.poll() is not None or not os.path.exists(port_file):
            return self.start_qdrant()
        self.qdrant = proc
        self.env["QDRANT_URL"] = "http://127.0.0.1:" + open(port_file).read().strip()
        if grpc and os.path.exists(gport_file):
            self.env["QDRANT_GRPC_PORT"] = open(gport_file).read().strip()
        self.env["QDRANT_API_KEY"] = key
        return None

    def python_missing(self):
        if self.vforge_py is None:
            if not self.py or not os.access(self.py, os.X_OK):
                self.vforge_py = "needs $VF_PY (the project's venv python)"
            else:
                r = subprocess.run([self.py, "-c", "import vforge"], capture_output=True, text=True,
                                   cwd=self.repo, env=self.env)
                self.vforge_py = None if r.returncode == 0 else "needs the vforge Python package"
        return self.vforge_py

    def script(self, b, n, body_cmds):
        """The bash script of block n: fixtures, env, setup, then body_cmds (lines).  A failing
        command names its README line (or the setup / fixture it came from) on the block's stderr
        (fd 9, so never inside a console step's compared output)."""
        path = os.path.join(self.state, f"block{n:02d}.sh")
        pre = ["set -eEo pipefail",
               "exec 9>&2",
               "__fail() {",
               f"  if [ \"$3\" = {shlex.quote(path)} ] && [ \"$2\" -gt \"$__BODY\" ]; then",
               f"    echo \"readme-test: exit $1 at {DOC} line $(($2 + __OFF)): $4\"",
               "  else echo \"readme-test: exit $1 in the block's setup ($3 line $2): $4\"; fi >&9",
               "}",
               "trap '__fail $? $LINENO \"${BASH_SOURCE[0]}\" \"$BASH_COMMAND\"' ERR",
               f"source {shlex.quote(os.path.join(self.src, 'tests/docs/readme_fixtures.sh'))}"]
        pre += ["export " + e for e in b.get("env")]
        pre += b.get("setup")
        body_first = len(pre) + 3                          # script line of body line 1 (after the 2 below)
        pre += [f"__BODY={body_first - 1}", f"__OFF={b.line + 1 - body_first}"]
        return "\n".join(pre + body_cmds) + "\n"

    def run_script(self, b, n, text, timeout):
        path = os.path.join(self.state, f"block{n:02d}.sh")   # the path script() names
        with open(path, "w") as f:
            f.write(text)
        out = os.path.join(self.state, f"block{n:02d}.out")
        err = os.path.join(self.state, f"block{n:02d}.err")
        t0 = time.monotonic()
        with open(out, "w") as fo, open(err, "w") as fe:
            try:
                p = subprocess.Popen(["bash", path], cwd=self.repo, env=self.env, stdout=fo, stderr=fe,
                                     start_new_session=True)
                rc = p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, 9)
                p.wait()
                rc = "timeout"
        return rc, time.monotonic() - t0, out, err

    def expand(self, s):
        """${VAR}, ${VAR:-default} and $VAR of the blocks' environment; anything else is kept."""
        def sub(m):
            name = m.group(1) or m.group(3)
            if name in self.env and self.env[name] != "":
                return self.env[name]
            if m.group(2) is not None:
                return m.group(2)
            return m.group(0)
        return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)", sub, s)

    def replaced(self, b, text):
        for r in b.get("replace"):
            old, new = r.split(" => ", 1)
            new = self.expand(new)
            if old not in text:
                raise ReadmeError(f"{b.where()}: replace: '{old}' does not occur in the block")
            text = text.replace(old, new)
        return text

    def run_block(self, b, n):
        for reason in b.get("skip"):
            return "skipped", reason
        needs = [w for a in b.get("needs") for w in a.split()]
        if b.lang in PYTHON:
            why = self.python_missing()
            if why:
                return "skipped", why
        for w in needs:
            why = self.missing(w)
            if why:
                return "skipped", why
        timeout = int(b.get("timeout")[0]) if b.has("timeout") else 300
        want_rc = int(b.get("exit")[0]) if b.has("exit") else 0
        if not any(ln.strip() for ln in b.body):
            raise ReadmeError(f"{b.where()}: an empty block")
        text = self.replaced(b, "\n".join(b.body) + "\n")
        for p in b.get("file"):
            dest = os.path.join(self.repo, p)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(dest, "w") as f:
                f.write(text)
        steps = None
        if b.lang == "console":
            steps = console_steps(text.rstrip("\n").split("\n"))
            if not steps:
                raise ReadmeError(f"{b.where()}: a console block without a `$ ` command")
            redir = "2>&1" if b.has("stderr") else ""
            cmds = []
            for k, (cmd, _) in enumerate(steps):
                o = shlex.quote(os.path.join(self.state, f"block{n:02d}.step{k}"))
                cmds.append("{ " + "\n".join(cmd) + "\n} > " + o + " " + redir)
            body = cmds
        elif b.lang in SHELL:
            body = text.rstrip("\n").split("\n")
        elif b.lang in YAML:
            yml = text
            if not ({"vectors", "datasource"} <= {k for k, _ in top_sections(text)}):
                tpl = b.get("template")[0] if b.has("template") else "examples/fashion-mnist.yaml"
                yml = merge_fragment(open(os.path.join(self.repo, tpl)).read(), text)
            cfg = os.path.join(self.state, f"block{n:02d}.yaml")
            raw = os.path.join(self.state, f"block{n:02d}.block.yaml")
            with open(cfg, "w") as f:
                f.write(yml)
            with open(raw, "w") as f:
                f.write(text)
            body = ["CONFIG=" + shlex.quote(cfg), "BLOCK=" + shlex.quote(raw)]
            body += b.get("check") or ['vforge load inspect "$CONFIG" > /dev/null']
        else:   # python / pycon
            src = os.path.join(self.state, f"block{n:02d}.py")
            with open(src, "w") as f:
                f.write(text)
            if b.lang == "pycon":
                body = [f"{shlex.quote(self.py)} -c 'import doctest, sys; f, _ = doctest.testfile(sys.argv[1], "
                        f"module_relative=False, optionflags=doctest.ELLIPSIS); sys.exit(1 if f else 0)' {shlex.quote(src)}"]
            else:
                body = [f"{shlex.quote(self.py)} {shlex.quote(src)}"]
        rc, secs, out, err = self.run_script(b, n, self.script(b, n, body), timeout)
        if rc == "timeout":
            return "failed", f"still running after {timeout} s" + tail(err)
        if rc != want_rc:
            return "failed", f"exit {rc} (want {want_rc})" + tail(err) + tail(out, "stdout")
        for k, (cmd, want) in enumerate(steps or []):
            if not want:
                continue
            got = open(os.path.join(self.state, f"block{n:02d}.step{k}"), errors="replace").read().rstrip("\n").split("\n")
            if not output_matches(want, got):
                what = "stdout + stderr" if b.has("stderr") else "stdout (a `stderr` marker adds stderr)"
                return "failed", (f"the output of `{cmd[0]}` differs from the documented one; compared: {what}\n"
                                  + "    documented:\n" + "".join(f"      {w}\n" for w in want)
                                  + "    actual:\n" + "".join(f"      {g}\n" for g in got[:40]))
        return "passed", f"{secs:.1f} s"

    def cleanup(self):
        if self.qdrant:
            self.qdrant.terminate()
            self.qdrant.wait()
        subprocess.run(["bash", "-c", f"source {shlex.quote(os.path.join(self.src, 'tests/docs/readme_fixtures.sh'))}; readme_cleanup"],
                       cwd=self.repo, env=self.env)


def tail(path, what="stderr", n=25):
    try:
        lines = open(path, errors="replace").read().rstrip("\n").split("\n")
    except OSError:
        return ""
    lines = [ln for ln in lines if ln.strip()]
    if not lines:
        return ""
    return f"\n    {what} (last {min(n, len(lines))} lines):\n" + "".join(f"      {ln}\n" for ln in lines[-n:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--readme", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--list", action="store_true", help="print the blocks and their markers, run nothing")
    args = ap.parse_args()
    global DOC
    DOC = os.path.basename(args.readme)
    try:
        blocks = parse(args.readme)
    except ReadmeError as e:
        print(f"readme: {e}")
        return 1
    for b in blocks:
        if b.lang not in SHELL | YAML | PYTHON | TEXT:
            print(f"readme: {b.where()}: unknown code block language '{b.lang}' "
                  f"(executed: sh console yaml python pycon; not executed: {' '.join(sorted(TEXT))})")
            return 1
    code = [b for b in blocks if b.lang not in TEXT]
    if args.list:
        for b in code:
            print(b.where(), b.d)
        return 0
    r = Runner(args)
    r.prepare()
    t0 = time.monotonic()
    try:
        for n, b in enumerate(code):
            try:
                status, detail = r.run_block(b, n)
            except (ReadmeError, OSError) as e:
                status, detail = "failed", str(e)
            first = next((ln.strip() for ln in b.body if ln.strip()), "")[:70]
            print(f"{status.upper():7} {b.where()}: {first}" + (f"  [{detail}]" if status != "failed" else ""), flush=True)
            if status == "failed":
                print("    " + detail.rstrip("\n"), flush=True)
            r.results.append((b, status, detail))
    finally:
        r.cleanup()
    ran = [x for x in r.results if x[1] != "skipped"]
    passed = [x for x in ran if x[1] == "passed"]
    skipped = [x for x in r.results if x[1] == "skipped"]
    print(f"readme: {len(blocks)} code blocks ({len(blocks) - len(code)} text, not executed); "
          f"{len(ran)} run, {len(passed)} passed, {len(ran) - len(passed)} failed, {len(skipped)} skipped "
          f"in {time.monotonic() - t0:.0f} s")
    for b, _, why in skipped:
        print(f"  skipped {b.where()}: {why}")
    for b, st, _ in r.results:
        if st == "failed":
            print(f"  FAILED  {b.where()}")
    return 0 if len(passed) == len(ran) else 1


if __name__ == "__main__":
    sys.exit(main())
