; semgraph extraction query for C#.
; Captures: @package + @name (the file's package / namespace: the root of its names);
; @definition.<kind> + @name; @scope.namespace + @name (block namespaces);
; @import (using); @call + @callee (+ @receiver).
(file_scoped_namespace_declaration name: (_) @name) @package

(class_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(struct_declaration name: (identifier) @name) @definition.struct
(interface_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.method
(property_declaration name: (identifier) @name) @definition.method
(local_function_statement name: (identifier) @name) @definition.function
(namespace_declaration name: (_) @name) @scope.namespace

(using_directive) @import

(invocation_expression function: (identifier) @callee) @call
(invocation_expression function: (generic_name . (identifier) @callee)) @call
(invocation_expression
  function: (member_access_expression
    expression: _ @receiver
    name: [(identifier) (generic_name . (identifier))] @callee)) @call
(object_creation_expression type: [(identifier) (qualified_name)] @callee) @call
(object_creation_expression type: (generic_name . (identifier) @callee)) @call
