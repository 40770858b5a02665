; semgraph extraction query for Go.
; Captures: @definition.<kind> + @name (+ @owner: a method's receiver type); @import;
; @call + @callee (+ @receiver).

(function_declaration name: (identifier) @name) @definition.function
(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      type: [(type_identifier) @owner
             (pointer_type (type_identifier) @owner)
             (generic_type type: (type_identifier) @owner)
             (pointer_type (generic_type type: (type_identifier) @owner))]))
  name: (field_identifier) @name) @definition.method
(type_spec name: (type_identifier) @name type: (struct_type)) @definition.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface

(import_spec) @import

(call_expression function: (identifier) @callee) @call
(call_expression
  function: (selector_expression
    operand: (_) @receiver
    field: (field_identifier) @callee)) @call
