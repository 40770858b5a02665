; semgraph extraction query for PHP.
; Captures: @package + @name (the file's package / namespace: the root of its names);
; @definition.<kind> + @name; @scope.namespace + @name (block namespaces);
; @import (use, require / include); @call + @callee (+ @receiver).
(namespace_definition name: (_) @name !body) @package

(class_declaration name: (name) @name) @definition.class
(interface_declaration name: (name) @name) @definition.interface
(trait_declaration name: (name) @name) @definition.trait
(enum_declaration name: (name) @name) @definition.enum
(function_definition name: (name) @name) @definition.function
(method_declaration name: (name) @name) @definition.method
(namespace_definition name: (_) @name body: (compound_statement)) @scope.namespace

(namespace_use_declaration) @import
[(require_expression) (require_once_expression)
 (include_expression) (include_once_expression)] @import

(function_call_expression function: [(name) (qualified_name)] @callee) @call
(member_call_expression object: _ @receiver name: (name) @callee) @call
(nullsafe_member_call_expression object: _ @receiver name: (name) @callee) @call
(scoped_call_expression scope: _ @receiver name: (name) @callee) @call
(object_creation_expression [(name) (qualified_name)] @callee) @call
