; semgraph extraction query for Ruby.
; Captures: @definition.<kind> + @name; @import (require / require_relative / load);
; @call + @callee (+ @receiver).

(module name: [(constant) (scope_resolution)] @name) @definition.module
(class name: [(constant) (scope_resolution)] @name) @definition.class
(method name: (_) @name) @definition.function
(singleton_method name: (_) @name) @definition.method

(call
  !receiver
  method: (identifier) @_require
  arguments: (argument_list . (string))
  (#match? @_require "^(require|require_relative|load)$")) @import

(call
  !receiver
  method: (identifier) @callee
  (#not-eq? @callee "require")
  (#not-eq? @callee "require_relative")
  (#not-eq? @callee "load")) @call
(call receiver: _ @receiver method: [(identifier) (constant)] @callee) @call
