"""A synthetic repository in all sixteen parsed languages, for ``bench.firstindex.bench_parse
--languages``: the eight of :mod:`bench.synth` (its generator, unchanged) and the eight added
by issue 16 (C#, Kotlin, Ruby, PHP, Swift, Scala, Bash, Lua), each file a type with a handful
of methods that call each other and a few top-level functions, tens to a couple of hundred
lines, like :mod:`bench.synth`'s. Deterministic for a given seed; one git commit.
"""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

from bench.synth import EXT as OLD_EXT
from bench.synth import _name, file_text

OLD = ["python", "javascript", "typescript", "go", "java", "rust", "c", "cpp"]
NEW = ["csharp", "kotlin", "ruby", "php", "swift", "scala", "bash", "lua"]
LANGUAGES = OLD + NEW
EXT = {**OLD_EXT, "csharp": "cs", "kotlin": "kt", "ruby": "rb", "php": "php", "swift": "swift"}
EXT |= {"scala": "scala", "bash": "sh", "lua": "lua"}

# (file head, type open, method, call, type close, function) per language; {t} type name,
# {m} method name, {c} callee, {v} a value
TEMPLATES: dict[str, tuple[str, str, str, str, str, str]] = {
    "csharp": (
        "using System;\nusing Acme.Util;\n\nnamespace Acme.Gen {{\n",
        "public class {t} : Base {{\n",
        "    // Compute a step.\n    public int {m}(int value) {{\n{body}"
        "        return value;\n    }}\n",
        "        this.{c}(value + {v});\n",
        "}\n}\n",
        "",
    ),
    "kotlin": (
        "package acme.gen\n\nimport acme.util.Helper\n\n",
        "class {t} : Base() {{\n",
        "    // Compute a step.\n    fun {m}(value: Int): Int {{\n{body}"
        "        return value\n    }}\n",
        "        this.{c}(value + {v})\n",
        "}\n",
        "fun {m}(value: Int): Int {{\n{body}    return value\n}}\n",
    ),
    "ruby": (
        'require "json"\nrequire_relative "helper"\n\nmodule Gen\n',
        "  class {t} < Base\n",
        "    # Compute a step.\n    def {m}(value)\n{body}      value\n    end\n",
        "      self.{c}(value + {v})\n",
        "  end\nend\n",
        "def {m}(value)\n{body}  value\nend\n",
    ),
    "php": (
        "<?php\nnamespace Acme\\Gen;\n\nuse Acme\\Util\\Helper;\n\n",
        "class {t} extends Base {{\n",
        "    // Compute a step.\n    public function {m}($value) {{\n{body}"
        "        return $value;\n    }}\n",
        "        $this->{c}($value + {v});\n",
        "}\n",
        "function {m}($value) {{\n{body}    return $value;\n}}\n",
    ),
    "swift": (
        "import Foundation\nimport Util\n\n",
        "class {t}: Base {{\n",
        "    // Compute a step.\n    func {m}(_ value: Int) -> Int {{\n{body}"
        "        return value\n    }}\n",
        "        self.{c}(value + {v})\n",
        "}\n",
        "func {m}(_ value: Int) -> Int {{\n{body}    return value\n}}\n",
    ),
    "scala": (
        "package acme.gen\n\nimport acme.util.Helper\n\n",
        "class {t} extends Base {{\n",
        "  // Compute a step.\n  def {m}(value: Int): Int = {{\n{body}    value\n  }}\n",
        "    this.{c}(value + {v})\n",
        "}\n",
        "object {t}Fns {{\n  def {m}(value: Int): Int = value\n}}\n",
    ),
    "bash": (
        '#!/usr/bin/env bash\nsource "$(dirname "$0")/common.sh"\n\n',
        "",
        '# Compute a step.\n{m}() {{\n{body}  echo "$1"\n}}\n',
        '  {c} "$(( $1 + {v} ))"\n',
        "",
        "",
    ),
    "lua": (
        'local helper = require("util.helper")\n\nlocal {t} = {{}}\n\n',
        "",
        "-- Compute a step.\nfunction {t}:{m}(value)\n{body}  return value\nend\n",
        "  self:{c}(value + {v})\n",
        "",
        "local function {m}(value)\n{body}  return value\nend\n",
    ),
}


def new_file_text(rng: random.Random, language: str) -> str:
    head, open_type, method, call, close_type, function = TEMPLATES[language]
    t = _name(rng, cap=True)
    names = [_name(rng) for _ in range(rng.randint(3, 12))]

    def body(k: int) -> str:
        return "".join(call.format(c=rng.choice(names), v=rng.randint(1, 9)) for _ in range(k))

    out = [head.format(t=t), open_type.format(t=t)]
    out += [method.format(t=t, m=m, body=body(rng.randint(1, 6))) + "\n" for m in names]
    out.append(close_type)
    if function:
        for _ in range(rng.randint(0, 3)):
            fn = function.format(t=t, m=_name(rng), body=body(rng.randint(1, 3)))
            out.append(fn.replace("this.", "").replace("self.", "").replace("$this->", ""))
    return "".join(out)


def generate_languages(root: Path, n_files: int, seed: int = 0) -> Path:
    """A git repository at ``root``: ``n_files`` files, the sixteen languages in turn."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=False)
    for i in range(n_files):
        language = LANGUAGES[i % len(LANGUAGES)]
        path = root / f"pkg{i % 61}" / language / f"mod_{i}.{EXT[language]}"
        path.parent.mkdir(parents=True, exist_ok=True)
        text = file_text(rng, language) if language in OLD else new_file_text(rng, language)
        path.write_text(text)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "synth",
        "GIT_AUTHOR_EMAIL": "synth@example.invalid",
        "GIT_COMMITTER_NAME": "synth",
        "GIT_COMMITTER_EMAIL": "synth@example.invalid",
    }
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "synthetic"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    return root
