"""The names each language family provides without an import: functions and types a bare
call may name (``len``, ``printf``, ``panic``) and receivers whose methods are the language's
or its standard library's (``console.log``, ``System.out``, ``Vec::new``). A call that names
one, and nothing of the repository does, is classified ``external``
(:mod:`semgraph.resolve.tiers`).
"""

from __future__ import annotations

BUILTIN_CALLS: dict[str, frozenset[str]] = {
    "python": frozenset(
        [
            "print",
            "len",
            "range",
            "str",
            "int",
            "float",
            "list",
            "dict",
            "set",
            "tuple",
            "isinstance",
            "getattr",
            "setattr",
            "hasattr",
            "open",
            "super",
            "sorted",
            "enumerate",
            "zip",
            "map",
            "filter",
            "min",
            "max",
            "sum",
            "any",
            "all",
            "repr",
            "type",
            "iter",
            "next",
            "abs",
            "round",
            "format",
            "id",
            "hash",
            "vars",
            "dir",
            "issubclass",
            "callable",
            "bool",
            "bytes",
            "object",
            "frozenset",
            "ValueError",
            "TypeError",
            "KeyError",
            "RuntimeError",
            "OSError",
            "Exception",
            "NotImplementedError",
            "AttributeError",
            "IndexError",
            "StopIteration",
            "AssertionError",
        ]
    ),
    "js": frozenset(
        [
            "require",
            "parseInt",
            "parseFloat",
            "setTimeout",
            "setInterval",
            "clearTimeout",
            "clearInterval",
            "String",
            "Number",
            "Boolean",
            "Array",
            "Object",
            "Promise",
            "Error",
            "Map",
            "Set",
            "Date",
            "Symbol",
            "RegExp",
            "fetch",
        ]
    ),
    "go": frozenset(
        [
            "len",
            "cap",
            "make",
            "new",
            "append",
            "copy",
            "delete",
            "panic",
            "recover",
            "print",
            "println",
            "close",
            "complex",
            "real",
            "imag",
            "min",
            "max",
            "clear",
            "string",
            "int",
            "int64",
            "int32",
            "uint",
            "byte",
            "rune",
            "float64",
            "error",
        ]
    ),
    "java": frozenset(["super", "this"]),
    "rust": frozenset(["Some", "None", "Ok", "Err", "Box", "Vec", "String", "drop", "panic"]),
    "c": frozenset(
        [
            "printf",
            "fprintf",
            "sprintf",
            "snprintf",
            "malloc",
            "calloc",
            "realloc",
            "free",
            "memcpy",
            "memset",
            "memcmp",
            "strlen",
            "strcmp",
            "strncmp",
            "strcpy",
            "strncpy",
            "exit",
            "abort",
            "assert",
            "sizeof",
        ]
    ),
}
BUILTIN_RECEIVERS: dict[str, frozenset[str]] = {
    "python": frozenset(["str", "dict", "list", "set", "bytes", "int", "float", "object"]),
    "js": frozenset(
        [
            "console",
            "Math",
            "JSON",
            "Object",
            "Array",
            "Promise",
            "Number",
            "String",
            "Date",
            "Reflect",
            "process",
            "document",
            "window",
        ]
    ),
    "go": frozenset(),
    "java": frozenset(
        [
            "System",
            "Math",
            "String",
            "Integer",
            "Long",
            "Double",
            "Boolean",
            "Objects",
            "Arrays",
            "Collections",
            "List",
            "Map",
            "Set",
            "Optional",
            "Thread",
        ]
    ),
    "rust": frozenset(
        ["Vec", "String", "Box", "Option", "Result", "HashMap", "HashSet", "Rc", "Arc"]
    ),
    "c": frozenset(["std"]),
}


def _words(names: str) -> frozenset[str]:
    return frozenset(names.split())


# csharp, kotlin, scala, ruby, php, swift, bash, lua: the commonest builtins of each
BUILTIN_CALLS |= {
    "csharp": frozenset(["nameof", "typeof", "sizeof"]),
    "kotlin": _words(
        "println print listOf mutableListOf mapOf mutableMapOf setOf arrayOf require check "
        "error lazy repeat run let apply also with TODO"
    ),
    "scala": _words("println print require assert Some None List Map Seq Set"),
    "swift": _words("print fatalError precondition assert min max abs zip stride"),
    "ruby": _words(
        "puts print p pp raise require require_relative attr_accessor attr_reader "
        "attr_writer include extend private protected public loop lambda proc format"
    ),
    "php": _words(
        "count strlen array_map array_filter array_keys in_array implode explode sprintf "
        "printf isset unset empty is_array json_encode json_decode var_dump die exit "
        "strtolower strtoupper trim str_replace array_merge"
    ),
    "bash": _words(
        "echo printf cd pwd test read exit return export local declare set unset shift "
        "eval exec trap wait true false cat grep sed awk cut sort uniq tr head tail find "
        "xargs mkdir rm cp mv ls ln chmod touch date sleep dirname basename command git"
    ),
    "lua": _words(
        "print pairs ipairs type tostring tonumber error assert pcall xpcall select "
        "setmetatable getmetatable rawget rawset next unpack"
    ),
}
BUILTIN_RECEIVERS |= {
    "csharp": frozenset(["Console", "Math", "String", "Task", "File", "Path", "Enumerable"]),
    "kotlin": frozenset(["System", "Math"]),
    "scala": frozenset(["System", "Math", "Console", "Future"]),
    "swift": frozenset(["DispatchQueue", "FileManager", "NotificationCenter"]),
    "ruby": frozenset(["File", "Dir", "JSON", "Time", "Kernel", "Math", "Process"]),
    "php": frozenset(),
    "bash": frozenset(),
    "lua": frozenset(["string", "table", "math", "os", "io", "coroutine"]),
}
# the platform's classes a C#/Ruby/Swift call names with no import of its own (Ruby's core,
# C#'s System, Swift's standard library): external, never a site into an imported namespace
# (semgraph.resolve.open_sites)
PLATFORM_CLASSES = {
    "ruby": _words(
        "Object Proc Hash String Array Mutex Struct Module Class Gem ERB Integer Float Symbol "
        "Regexp Thread IO Set Kernel Exception StandardError ArgumentError RuntimeError "
        "TypeError NameError NoMethodError ObjectSpace Signal Fiber Range Rational Complex "
        "Encoding Marshal GC Method Comparable Enumerable Enumerator Random Logger Pathname "
        "StringIO Tempfile Etc URI CGI Digest Base64 SecureRandom OpenStruct Monitor Timeout "
        "Benchmark Zlib YAML Psych Socket Date DateTime BasicObject Warning"
    ),
    "csharp": _words(
        "Guid DateTime DateTimeOffset TimeSpan Environment Convert Activator Array Tuple "
        "Exception ArgumentException ArgumentNullException InvalidOperationException "
        "NotSupportedException NotImplementedException Object Int32 Int64 Double Decimal "
        "Boolean Char Type Nullable Lazy Uri Encoding StringBuilder Regex Interlocked Thread "
        "Stopwatch Debug Trace GC Buffer BitConverter Random Dictionary List HashSet"
    ),
    "swift": _words(
        "String Int Double Float Bool Array Dictionary Set Character URL Data Date UUID "
        "JSONEncoder JSONDecoder Result Optional Error NSError DispatchQueue Task"
    ),
}
# JavaScript/TypeScript: the ECMAScript, web platform and Node globals (a bare call, `new`, or a
# receiver: `Buffer.from()`, `JSON.parse()`), and the globals test runners inject
BUILTIN_CALLS["js"] = BUILTIN_CALLS["js"] | _words(
    "TypeError RangeError SyntaxError ReferenceError EvalError URIError AggregateError WeakMap "
    "WeakSet WeakRef Proxy BigInt URL URLSearchParams encodeURIComponent decodeURIComponent "
    "encodeURI decodeURI isNaN isFinite queueMicrotask structuredClone setImmediate "
    "clearImmediate atob btoa Headers Request Response FormData Blob File AbortController "
    "TextEncoder TextDecoder ReadableStream WritableStream TransformStream ArrayBuffer "
    "SharedArrayBuffer DataView Uint8Array Uint8ClampedArray Int8Array Uint16Array Int16Array "
    "Uint32Array Int32Array Float32Array Float64Array BigInt64Array BigUint64Array Event "
    "EventTarget CustomEvent XMLHttpRequest WebSocket Worker MessageChannel describe it test "
    "expect beforeEach afterEach beforeAll afterAll before after suite"
)
BUILTIN_RECEIVERS["js"] = BUILTIN_RECEIVERS["js"] | _words(
    "Buffer Symbol Map Set WeakMap WeakSet Error TypeError RegExp URL URLSearchParams Intl "
    "BigInt Boolean Atomics ArrayBuffer SharedArrayBuffer DataView Uint8Array Int8Array "
    "Uint16Array Int16Array Uint32Array Int32Array Float32Array Float64Array TextEncoder "
    "TextDecoder Headers Request Response AbortSignal AbortController crypto globalThis "
    "navigator location localStorage sessionStorage performance history module exports Deno "
    "Bun WebAssembly Proxy EventTarget jest vi"
)
