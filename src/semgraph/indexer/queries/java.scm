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
; `new Outer.Inner()` / `new a.b.C()`: the class is the callee, what names it the receiver
; (as in `a.b.m()`), so the receiver tier finds a nested class through its outer one
(object_creation_expression type: (type_identifier) @callee) @call
(object_creation_expression type: (scoped_type_identifier (_) @receiver . (type_identifier) @callee .)) @call
(object_creation_expression type: (generic_type . (type_identifier) @callee)) @call
(object_creation_expression
  type: (generic_type . (scoped_type_identifier (_) @receiver . (type_identifier) @callee .))) @call

; typed names (indexer/typed.py): locals, fields, parameters, `this.x = new T()`, returns
(local_variable_declaration type: (_) @bind.type
  declarator: (variable_declarator name: (identifier) @bind.name)) @bind
(local_variable_declaration
  declarator: (variable_declarator name: (identifier) @bind.name
    value: (object_creation_expression type: (_) @bind.call))) @bind
(field_declaration type: (_) @bind.type
  declarator: (variable_declarator name: (identifier) @bind.name)) @bind
(formal_parameter type: (_) @bind.type name: (identifier) @bind.name) @bind
(enhanced_for_statement type: (_) @bind.type name: (identifier) @bind.name) @bind
(assignment_expression
  left: (field_access object: (this) @bind.self field: (identifier) @bind.name)
  right: (object_creation_expression type: (_) @bind.call)) @bind
(method_declaration type: (_) @bind.type) @returns
