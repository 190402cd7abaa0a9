// The parsed form of a Jinja template (internal to the Jinja engine: its parser and jinja_render.cc).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "jinja/value.h"

namespace realign::jinja {

struct Node {
  enum class Kind {
    // statements
    kBlock,   // children
    kText,    // text
    kOutput,  // a
    kIf,      // a: condition, children[0]: then (block), children[1]: else (block or null)
    kFor,     // names (targets), a: iterable, b: filter or null, children[0]: body, children[1]: else
    kSet,     // names: one name or a tuple; or a: attribute target (kAttr); b: value, or children[0]: body
    kBreak,
    kContinue,
    // expressions
    kLiteral,      // value
    kName,         // text
    kList,         // children
    kTuple,        // children
    kDict,         // children: key, value, key, value, ...
    kAttr,         // a.text
    kIndex,        // a[b]
    kSlice,        // a[children 0:1:2] (each may be null)
    kCall,         // a(children; kwarg names in names, "" for positional)
    kFilter,       // a | text(children, names as in kCall)
    kTest,         // a is [not: negate] text(children)
    kUnary,        // op a
    kBinary,       // a op b
    kConditional,  // b if a else c (children[0]: else branch or null)
  };
  Kind kind;
  int line = 0;
  std::string text;  // text, name, attribute, filter or test name, operator
  Value value;
  std::vector<std::string> names;
  std::shared_ptr<Node> a, b;
  std::vector<std::shared_ptr<Node>> children;
  bool negate = false;
};
using NodePtr = std::shared_ptr<Node>;

// Parses `source`; errors name where:line.
NodePtr parse_template(const std::string& source, const std::string& where);

}  // namespace realign::jinja
