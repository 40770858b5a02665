"""The tiers of call resolution (:mod:`semgraph.resolve.resolver`): which definitions one call
site names, tried in order ``scope``, ``import``, ``module``, ``receiver``, ``unique``, and
the call's class (``resolved``, ``ambiguous``, ``external`` or ``unresolved``).

The ``receiver`` tier first asks the receiver's type (:mod:`semgraph.resolve.typed`): a local,
parameter or attribute of a known class resolves to that class's member; one of an external
or builtin type is ``external``; one of no known type stays ``unresolved``. A name that no
scope, import or type binds reaches ``unique``: the only definition with that name is a
resolution only for a bare call where such names are global (C, PHP, Lua, Ruby, Swift, shell);
everywhere else, and for every receiver of unknown type, it is a candidate (``ambiguous`` with
the reason ``name_only``), so an edge always has evidence: a type, an import or a scope.

A Go call that names a defined type (``Attr(x)``, ``tui.Attr(x)``) is a conversion: no edge,
``unresolved`` with the reason ``conversion``.

The module is a little over 300 lines: the tiers are one ordered decision, kept together.
"""

from __future__ import annotations

import re

from semgraph.resolve import go_reach, overloads
from semgraph.resolve.builtins import BUILTIN_CALLS, BUILTIN_RECEIVERS
from semgraph.resolve.go_types import GO, INTERFACE_TIER, GoTypes, indexed, unwrap
from semgraph.resolve.imports import MEMBER_SEP, ImportFile
from semgraph.resolve.open_sites import OpenImports
from semgraph.resolve.resolution import CallClass, Reason, Tier
from semgraph.resolve.scope import Ctx, FileScope, NameLookups, Sym
from semgraph.resolve.symtab import CLASS_KINDS
from semgraph.resolve.typed import RUST_UNWRAP, TypedNames, Value

# receivers naming the enclosing class: Python/Ruby/Swift/Lua `self`, `this` (Java, C#,
# Kotlin, Scala, JS), PHP `$this->` and `self::` / `static::`; `super` / C# `base` / PHP
# `parent::` name its bases
SELF_NAMES = frozenset({"self", "this", "cls", "super", "$this", "static", "base", "parent"})
SUPER_NAMES = frozenset({"super", "base", "parent"})
# bare calls see the enclosing class (Ruby `save`, Kotlin `save()`: an implicit self/this)
_MEMBER_SCOPE_FAMILIES = frozenset({"java", "c", "csharp", "kotlin", "scala", "swift", "ruby"})
BARE_KINDS = ("function", "class", "struct")  # constructors call a class
# where a bare name is global across files (C's linker, PHP and Lua globals, a Ruby top-level
# def, Swift's module, a sourced shell function), the only definition with that name is
# evidence; elsewhere a bare name no scope or import binds, and any receiver of unknown type,
# only suggest it: a candidate (ambiguous, reason ``name_only``), never a resolved edge
GLOBAL_NAME_FAMILIES = frozenset({"c", "php", "lua", "ruby", "swift", "bash"})
# where a package is a directory, its classes and functions are in scope without an import
_PACKAGE_DIR_FAMILIES = frozenset({"java", "kotlin", "scala"})
NAME_ONLY = "name_only"  # an ambiguous site's reason: one candidate, named by nothing else
SEVERAL = "several"  # an ambiguous site's reason: more than one candidate
RECEIVER_KINDS = ("method", "function")
RECEIVER_SPLIT = re.compile(r"\.|::|->")

# class, tier (for unresolved: the Reason), target keys, candidates
Outcome = tuple[CallClass, str | None, list[str], int]
_LITERAL = re.compile(r"""^(?:[rbfuRBFU]{0,2}["'`]|[\[{]|-?\d)""")  # "".join(), [].x(), 1.0.y()
_DOTTED = re.compile(r"^[A-Za-z_$@][\w$]*(?:(?:\.|::|->)[A-Za-z_$][\w$]*)*$")
_TYPED_KINDS = frozenset({"instance", "class", "super"})


class CallTiers:
    """Classifies call sites through the name lookups of one resolution."""

    def __init__(self, names: NameLookups, typed: TypedNames) -> None:
        self.names = names
        self.typed = typed
        self.receiver_value: Value | None = None  # the last classify's typed receiver
        self.open = OpenImports(names.db)  # C#/Ruby/Swift namespaces imported whole
        self._arity: tuple[str, int] | None = None  # (name, arguments) of an overloaded call
        self._overloads = overloads.Overloads(names.db)

    def classify(
        self,
        scope: FileScope,
        f: ImportFile,
        src: Sym,
        callee: str,
        receiver: str | None,
        line: int = 0,
        args: int = -1,
    ) -> Outcome:
        self.receiver_value = None
        self._arity = (callee, args) if f.family in overloads.FAMILIES and args >= 0 else None
        found = self._classify(scope, f, src, callee, receiver, line)
        conversion = f.family == GO and bool(found[2]) and found[0] is not CallClass.EXTERNAL
        conversion = conversion and found[1] not in (Tier.RECEIVER.value, INTERFACE_TIER)
        if conversion and all(self.typed.kind(k) == "type" for k in found[2]):  # Attr(x)
            return CallClass.UNRESOLVED, Reason.CONVERSION.value, [], 0
        return found

    def _classify(
        self,
        scope: FileScope,
        f: ImportFile,
        src: Sym,
        callee: str,
        receiver: str | None,
        line: int,
    ) -> Outcome:
        if receiver is None or not receiver.strip():
            found = self._bare(scope, f, src, callee, line)
            if found is not None:
                return found
            if callee in BUILTIN_CALLS.get(f.family, ()):
                return CallClass.EXTERNAL, None, [], 0
            if f.family == GO:  # a bare Go name is of the package (found above) or nothing
                return CallClass.UNRESOLVED, Reason.NO_DEFINITION.value, [], 0
            if self.open.is_open(f.path, f.family, callee, None):  # `new JsonSerializer()`
                return CallClass.EXTERNAL, None, [], 0
            return self._unique(callee, f.family, BARE_KINDS, bare=True)
        receiver = receiver.strip() if f.family != GO else unwrap(receiver.strip())
        if _LITERAL.match(receiver):
            return CallClass.EXTERNAL, None, [], 0
        found = self._with_receiver(scope, f, src, callee, receiver, line)
        if found is not None:
            return found
        if self.open.is_open(f.path, f.family, callee, receiver):  # Rack::Utils.escape()
            return CallClass.EXTERNAL, None, [], 0
        if not _DOTTED.match(receiver):  # x[0].m(), f().m(): an expression of unknown type
            return CallClass.UNRESOLVED, Reason.UNTYPED_EXPRESSION.value, [], 0
        return self._unique(callee, f.family, RECEIVER_KINDS, bare=False)

    def _bare(
        self, scope: FileScope, f: ImportFile, src: Sym, callee: str, line: int
    ) -> Outcome | None:
        for sym in scope.ancestors(src):
            if sym.parent_key is None:
                break
            if sym.kind in CLASS_KINDS:
                if f.family in _MEMBER_SCOPE_FAMILIES:
                    keys = self.names.members(sym.key, callee)
                    if keys:
                        return self._pick(keys, Tier.SCOPE)
                continue
            nested = scope.by_qn.get(f"{sym.qn}.{callee}")
            if nested:
                return self._pick([s.key for s in nested], Tier.SCOPE)
        called = self.typed.local(Ctx(scope, f, src), callee, line)
        if called is not None:  # a parameter or local called
            return self._called_local(Ctx(scope, f, src), called)
        bound = self.names.bound(scope, callee, f.family, src)
        if bound is not None:
            if bound[0] == "external":
                return CallClass.EXTERNAL, None, [], 0
            if bound[0] == "symbols":
                return self._pick(bound[1], Tier.IMPORT)
            made = self.names.js_default(bound[1][0])  # new (require("./c"))()
            if made:
                return self._pick(made, Tier.IMPORT)
        return self._module_level(scope, f, callee)

    def _module_level(self, scope: FileScope, f: ImportFile, callee: str) -> Outcome | None:
        """A top-level definition of the file (Go: of its package; Java, Kotlin, Scala: a
        class of its package, `new Repo()`)."""
        kind, target = ("dir", f.dir) if f.family == "go" else ("file", f.path)
        local = [
            k for k in self.names.top_level(kind, target, callee, f.family) if k != scope.module_key
        ]
        if not local and f.family in _PACKAGE_DIR_FAMILIES:
            local = self.names.package_level(f.dir, callee, f.family, BARE_KINDS)
        return self._pick(local, Tier.MODULE) if local else None

    def _called_local(self, ctx: Ctx, bound: tuple[str, str]) -> Outcome:
        """A called local: Go ``f := pkg.Func; f()`` calls what it names; else unresolved (a
        Python alias ``f = func`` too: an outside oracle stops at the assignment)."""
        if bound[0] == "value" and ctx.f.family == GO:
            value = self.typed.value_of_binding(ctx, bound, 0)
            if value[0] == "function":
                return self._pick(list(value[1]), Tier.SCOPE)
        return CallClass.UNRESOLVED, Reason.UNTYPED_LOCAL.value, [], 0

    def _typed(
        self, scope: FileScope, f: ImportFile, src: Sym, callee: str, receiver: str, line: int
    ) -> Outcome | None:
        """The receiver tier through the receiver's type (:mod:`semgraph.resolve.typed`)."""
        found = self.typed.receiver(scope, f, src, receiver, line)
        self.receiver_value = found[0] if found is not None else None
        if found is None and f.family == GO:  # items[i].m(): a slice's or map's element
            element = indexed(self.typed, Ctx(scope, f, src), receiver, line)
            found = (element, True) if element is not None else None
        if found is None:
            return None
        (kind, classes), local = found
        rust_unwrap = f.family == "rust" and callee in RUST_UNWRAP and kind in _TYPED_KINDS
        if rust_unwrap and not any(self.names.members(c, callee) for c in classes):
            return CallClass.EXTERNAL, None, [], 0  # Option/Result's own method
        if kind in _TYPED_KINDS:
            keys = [m for c in classes for m in self.names.members(c, callee)]
            if keys:
                return self._pick(keys, Tier.RECEIVER)
            if f.family == GO:  # a value of an interface type: every implementation
                impl = GoTypes.of(self.names).dispatch(classes, callee)
                if impl:
                    return CallClass.RESOLVED, INTERFACE_TIER, impl, len(impl)
            if any(self.names.has_external_base(c) for c in classes):
                return CallClass.EXTERNAL, None, [], 0  # inherited from outside
            return CallClass.UNRESOLVED, Reason.NO_MEMBER.value, [], 0
        if kind == "external" and f.family == GO:  # a value of an external interface
            impl = go_reach.dispatch(self.typed, Ctx(scope, f, src), receiver, callee, line)
            if impl:
                return CallClass.RESOLVED, INTERFACE_TIER, impl, len(impl)
        return self._untyped(f, callee, kind, classes, local)

    def _untyped(
        self, f: ImportFile, callee: str, kind: str, values: tuple[str, ...], local: bool
    ) -> Outcome | None:
        """A receiver that is no instance or class: external, a module, a function value."""
        if kind == "external":
            return CallClass.EXTERNAL, None, [], 0
        if kind in ("function", "unknown") and local:
            return CallClass.UNRESOLVED, Reason.UNTYPED_LOCAL.value, [], 0
        if kind == "module" and not local:  # click.core.f(): a submodule's definition
            mkind, target = values[0].split(MEMBER_SEP, 1)
            keys = self.names.top_level(mkind, target, callee, f.family)
            return self._pick(keys, Tier.IMPORT) if keys else None
        if kind == "function":  # @group def cli(); cli.command(): what a decorator made
            return CallClass.UNRESOLVED, Reason.UNTYPED_EXPRESSION.value, [], 0
        return None

    def _with_receiver(
        self, scope: FileScope, f: ImportFile, src: Sym, callee: str, receiver: str, line: int
    ) -> Outcome | None:
        parts = RECEIVER_SPLIT.split(receiver)
        root = parts[0].strip()
        simple = len(parts) == 1 and "(" not in receiver
        shadows = f.family == GO and self.typed.local(Ctx(scope, f, src), root, line) is not None
        imported = simple and self._is_import(scope, f, src, root)
        if shadows or not ((simple and root in SELF_NAMES) or imported):
            typed = self._typed(scope, f, src, callee, receiver, line)
            if typed is not None:
                return typed
        if root in SELF_NAMES and len(parts) == 1 and _is_self(root, f.family):
            return self._self_call(scope, f, src, callee, root)
        via_import = self._receiver_import(scope, f, src, callee, receiver, root)
        if via_import is not None:
            return via_import
        if imported and not shadows:  # an imported value (`from m import cfg`), typed there
            typed = self._typed(scope, f, src, callee, receiver, line)
            if typed is not None:
                return typed
        if f.family == "python" and scope.binding(root, src) is not None:
            return CallClass.UNRESOLVED, Reason.UNTYPED_EXPRESSION.value, [], 0  # not followed
        if root in BUILTIN_RECEIVERS.get(f.family, ()):
            return CallClass.EXTERNAL, None, [], 0
        if len(parts) == 1 and root[:1].isupper():
            classes = self.names.classes_named(scope, root, f)
            if len(classes) == 1:
                keys = self.names.members(classes[0], callee)
                if keys:
                    return self._pick(keys, Tier.RECEIVER)
        return None

    def _self_call(
        self, scope: FileScope, f: ImportFile, src: Sym, callee: str, root: str
    ) -> Outcome | None:
        """``self.m()`` / ``this.m()`` / ``super.m()``: a member of the enclosing class."""
        cls = next((s for s in scope.ancestors(src) if s.kind in CLASS_KINDS), None)
        if cls is not None:
            if root in SUPER_NAMES:
                parents = [
                    r[0]
                    for r in self.names.db.execute(
                        "SELECT parent_key FROM inherits WHERE child_key = ? ORDER BY rowid",
                        (cls.key,),
                    )
                ]
                keys = [k for p in parents for k in self.names.members(p, callee)]
            else:
                keys = self.names.members(cls.key, callee)
            if keys:
                return self._pick(keys, Tier.RECEIVER)
            if self.names.has_external_base(cls.key):  # inherited from outside the repository
                return CallClass.EXTERNAL, None, [], 0
            return CallClass.UNRESOLVED, Reason.NO_MEMBER.value, [], 0
        elif f.family == "lua" and "." in src.qn:  # `self` in `function T:m()` is T
            siblings = scope.by_qn.get(f"{src.qn.rsplit('.', 1)[0]}.{callee}")
            if siblings:
                return self._pick([s.key for s in siblings], Tier.RECEIVER)
        return None

    def _is_import(self, scope: FileScope, f: ImportFile, src: Sym, root: str) -> bool:
        return scope.binding(root, src) is not None or (
            self.names.bound(scope, root, f.family, src) is not None
        )

    def _receiver_import(
        self, scope: FileScope, f: ImportFile, src: Sym, callee: str, receiver: str, root: str
    ) -> Outcome | None:
        """``mod.f()`` / ``pkg.f()`` / ``ImportedClass.m()`` through the file's imports."""
        for name in dict.fromkeys((receiver, root)):
            bound = self.names.bound(scope, name, f.family, src)
            if bound is None:
                continue
            if bound[0] == "external":
                return CallClass.EXTERNAL, None, [], 0
            if name != receiver and f.family == "python":  # pkg.sub.f() is not pkg's f
                return CallClass.UNRESOLVED, Reason.UNTYPED_EXPRESSION.value, [], 0
            if name != receiver and f.family == GO:  # pkg.Var.m() is no function of pkg
                return None
            if bound[0] == "module":
                kind, target = bound[1][0].split(MEMBER_SEP, 1)
                keys = self.names.top_level(kind, target, callee, f.family)
                if keys:
                    return self._pick(keys, Tier.IMPORT)
                if f.family == "python" and name == receiver:  # not in that module
                    return CallClass.UNRESOLVED, Reason.NO_MEMBER.value, [], 0
                made = self.names.js_default(bound[1][0])  # module.exports = C
                keys = [
                    m for c in made if self.names.is_class(c) for m in self.names.members(c, callee)
                ]
                return self._pick(keys, Tier.IMPORT) if keys and name == receiver else None
            classes = [k for k in bound[1] if self.names.is_class(k)]
            keys = [m for c in classes for m in self.names.members(c, callee)]
            return self._pick(keys, Tier.IMPORT) if keys else None
        return None

    def _pick(self, keys: list[str], tier: Tier) -> Outcome:
        """:func:`_pick`, of the overloads that accept the call's arguments (Java & co.)."""
        if self._arity is not None and len(keys) > 0:
            keys = self._overloads.narrow(keys, *self._arity)
        return _pick(keys, tier)

    def _unique(self, callee: str, fam: str, kinds: tuple[str, ...], *, bare: bool) -> Outcome:
        """The definitions a name alone suggests: resolved (tier ``unique``) only for a bare
        name where such names are global (:data:`GLOBAL_NAME_FAMILIES`), else candidates."""
        total, keys = self.names.by_name(callee, fam, kinds)
        if total == 0:
            return CallClass.UNRESOLVED, None, [], 0
        source = prefer_source(keys)
        total, keys = (len(source), source) if len(source) < len(keys) else (total, keys)
        if total == 1 and bare and fam in GLOBAL_NAME_FAMILIES:
            return CallClass.RESOLVED, Tier.UNIQUE.value, keys, 1
        return CallClass.AMBIGUOUS, NAME_ONLY if total == 1 else SEVERAL, keys, total


def _is_self(root: str, fam: str) -> bool:
    """``static`` / ``parent`` (PHP) and ``base`` (C#) are receivers only in their language."""
    if root in ("static", "parent"):
        return fam == "php"
    if root == "base":
        return fam == "csharp"
    return True


_DECLARATIONS = re.compile(r"\.d\.[cm]?ts$")  # TypeScript declaration files
_GOOS = (
    "aix|android|darwin|dragonfly|freebsd|hurd|illumos|ios|js|nacl|netbsd|openbsd|plan9|"
    "solaris|wasip1|windows|zos"
)
_GOARCH = (
    "386|arm|armbe|arm64|arm64be|loong64|mips|mipsle|mips64|mips64le|ppc|ppc64|ppc64le|riscv|"
    "riscv64|s390|s390x|sparc|sparc64|wasm"
)
# a Go file built only for another platform than linux/amd64 (x_windows.go, x_arm64_test.go,
# x_linux_arm64.go): Go reads the last one or two underscore elements of its name
_GO_ELSEWHERE = re.compile(
    rf"_(?:(?:{_GOOS})(?:_(?:amd64|{_GOARCH}))?|(?:linux_)?(?:{_GOARCH}))(?:_test)?\.go$"
)


def prefer_source(keys: list[str]) -> list[str]:
    """The candidates in the files the build describes, when some are not: a TypeScript
    declaration file (``x.d.ts`` beside ``x.ts``) is preferred to nothing, never to the code;
    a Go file built only for another platform (``util_windows.go``, ``x_arm64.go``) yields to
    one built for linux/amd64, the platform the graph describes (as ``go build`` and the Go
    oracle on Linux)."""
    if len(keys) < 2:
        return keys
    paths = [k.split("|", 2)[1] if k.count("|") >= 2 else "" for k in keys]
    built = [k for k, p in zip(keys, paths, strict=True) if not _DECLARATIONS.search(p)]
    built = [
        k for k, p in zip(keys, paths, strict=True) if k in built and not _GO_ELSEWHERE.search(p)
    ]
    return built if built else keys


def _pick(keys: list[str], tier: Tier) -> Outcome:
    """One candidate resolves; several (overloads, duplicate definitions) are ambiguous."""
    unique = prefer_source(list(dict.fromkeys(keys)))
    if len(unique) == 1:
        return CallClass.RESOLVED, tier.value, unique, 1
    return CallClass.AMBIGUOUS, SEVERAL, unique, len(unique)
