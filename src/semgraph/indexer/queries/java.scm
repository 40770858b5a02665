; semgraph extraction query for Java.
; Captures: @definition.<kind> + @name; @import; @call + @callee (+ @receiver).

(class_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(annotation_type_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.method

(import_declaration) @import

(method_invocation !object name: (identifier) @callee) @call
(method_invocation object: (_) @receiver name: (identifier) @callee) @call
(object_creation_expression type: [(type_identifier) (scoped_type_identifier)] @callee) @call
(object_creation_expression
  type: (generic_type . [(type_identifier) (scoped_type_identifier)] @callee)) @call
