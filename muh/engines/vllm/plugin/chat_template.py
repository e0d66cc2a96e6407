"""The model's chat template without the empty think block, written under muh's folder at start.

``python3 chat_template.py MODEL_DIR OUT INFO`` reads the model's template (``chat_template.jinja``, else
``tokenizer_config.json``'s ``chat_template``), removes every string literal that is only an empty think
block (``'<think>\n\n</think>\n\n'``: with thinking off the Qwen3.5/3.6 template writes it into the prompt
and the model then emits only "!": the team's notes, https://github.com/dylanyunlon/project_6, 003:5826-5837)
and writes the result to OUT atomically. It never writes into MODEL_DIR (it may be read-only).
Exit 0: OUT written, the run file passes ``--chat-template OUT``;
exit 1: nothing to fix or nothing readable, one line says why and the model's own template is served.
OUT ``-``: only INFO is written. INFO (JSON, ``{"think_in_prompt": bool}``): whether the template, rendered
for one user message with the generation prompt, ends inside an open think block (then the answer starts
with reasoning; muh's request hook splits it out); written when jinja2 can render the template.
Standard library only (jinja2 when present).
"""

import json
import os
import re
import sys
import tempfile

EMPTY_THINK = re.compile(r"""(?P<q>['"])<think>(?:\\n|\s)*</think>(?:\\n|\s)*(?P=q)""")


def read_template(model):
    path = os.path.join(model, "chat_template.jinja")
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            return f.read(), path
    path = os.path.join(model, "tokenizer_config.json")
    with open(path, encoding="utf-8") as f:
        template = json.load(f).get("chat_template")
    if isinstance(template, list):  # named templates: the default one
        template = next(
            (t.get("template") for t in template if isinstance(t, dict) and t.get("name") == "default"), None
        )
    return (template if isinstance(template, str) else None), path


def fix(template):
    """(template without empty think blocks, how many were removed)."""
    return EMPTY_THINK.subn(lambda m: m.group("q") * 2, template)


def think_in_prompt(template):
    """True/False: the generation prompt ends with an open <think>; None: cannot be rendered here."""
    try:
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        text = (
            ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
            .from_string(template)
            .render(messages=[{"role": "user", "content": "x"}], add_generation_prompt=True)
        )
    except Exception:  # noqa: BLE001 - no jinja2, or a template needing transformers' helpers
        return None
    return text.rstrip().endswith("<think>")


def write(path, text):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", prefix=".muh.")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv):
    model, out, info = argv[1], argv[2], argv[3]
    try:
        template, source = read_template(model)
    except (OSError, ValueError) as exc:
        print(
            "[muh] chat template: cannot read the model's (%s: %s): the model's own is served"
            % (type(exc).__name__, exc)
        )
        return 1
    if not template:
        print("[muh] chat template: %s has none: the model's own is served" % source)
        return 1
    opens = think_in_prompt(template)
    if opens is not None:
        try:
            write(info, json.dumps({"think_in_prompt": opens}))
        except OSError as exc:
            print("[muh] chat template: cannot write %s (%s)" % (info, exc))
    if out == "-":
        return 1
    new, n = fix(template)
    if not n:
        print("[muh] chat template: no empty think block in %s: the model's own is served" % source)
        return 1
    try:
        write(out, new)
    except OSError as exc:
        print("[muh] chat template: cannot write %s (%s): the model's own is served" % (out, exc))
        return 1
    print("[muh] chat template: %d empty think block(s) removed from %s; serving %s" % (n, source, out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
