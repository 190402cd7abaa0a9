#include "jinja/parser.h"

namespace realign::jinja {

NodePtr Parser::expression() {
  NodePtr value = or_expr();
  if (is_name("if")) {
    NodePtr n = make(Node::Kind::kConditional, peek().line);
    ++p_;
    n->b = value;
    n->a = or_expr();
    n->children.push_back(nullptr);
    if (is_name("else")) {
      ++p_;
      n->children[0] = expression();
    }
    return n;
  }
  return value;
}

NodePtr Parser::binary(const std::string& op, NodePtr l, NodePtr r, int line) {
  NodePtr n = make(Node::Kind::kBinary, line);
  n->text = op;
  n->a = std::move(l);
  n->b = std::move(r);
  return n;
}

NodePtr Parser::or_expr() {
  NodePtr l = and_expr();
  while (is_name("or")) {
    const int line = next().line;
    l = binary("or", l, and_expr(), line);
  }
  return l;
}

NodePtr Parser::and_expr() {
  NodePtr l = not_expr();
  while (is_name("and")) {
    const int line = next().line;
    l = binary("and", l, not_expr(), line);
  }
  return l;
}

NodePtr Parser::not_expr() {
  if (is_name("not")) {
    NodePtr n = make(Node::Kind::kUnary, next().line);
    n->text = "not";
    n->a = not_expr();
    return n;
  }
  return compare();
}

NodePtr Parser::compare() {
  NodePtr l = additive();
  for (;;) {
    const int line = peek().line;
    if (peek().type == Tok::kOp && (peek().text == "==" || peek().text == "!=" || peek().text == "<" ||
                                    peek().text == ">" || peek().text == "<=" || peek().text == ">=")) {
      const std::string op = next().text;
      l = binary(op, l, additive(), line);
    } else if (is_name("in")) {
      ++p_;
      l = binary("in", l, additive(), line);
    } else if (is_name("not") && is_name("in", 1)) {
      p_ += 2;
      l = binary("not in", l, additive(), line);
    } else {
      return l;
    }
  }
}

NodePtr Parser::additive() {
  NodePtr l = concat();
  while (is_op("+") || is_op("-")) {
    const Token& op = next();
    l = binary(op.text, l, concat(), op.line);
  }
  return l;
}

NodePtr Parser::concat() {
  NodePtr l = multiplicative();
  while (is_op("~")) {
    const int line = next().line;
    l = binary("~", l, multiplicative(), line);
  }
  return l;
}

NodePtr Parser::multiplicative() {
  NodePtr l = power();
  while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
    const Token& op = next();
    l = binary(op.text, l, power(), op.line);
  }
  return l;
}

NodePtr Parser::power() {
  NodePtr l = unary();
  while (is_op("**")) {
    const int line = next().line;
    l = binary("**", l, unary(), line);
  }
  return l;
}

NodePtr Parser::unary() {
  if (is_op("-") || is_op("+")) {
    NodePtr n = make(Node::Kind::kUnary, peek().line);
    n->text = next().text;
    n->a = unary();
    return n;
  }
  return filters(postfix(primary()));
}

void Parser::call_args(NodePtr& n) {
  expect_op("(");
  while (!is_op(")")) {
    if (peek().type == Tok::kName && is_op("=", 1)) {
      n->names.push_back(next().text);
      ++p_;
    } else {
      n->names.emplace_back();
    }
    n->children.push_back(expression());
    if (!is_op(")")) expect_op(",");
  }
  ++p_;
}

NodePtr Parser::postfix(NodePtr n) {
  for (;;) {
    const int line = peek().line;
    if (is_op(".")) {
      ++p_;
      NodePtr a = make(Node::Kind::kAttr, line);
      a->a = n;
      if (peek().type == Tok::kNumber)
        a->text = next().text;  // x.0
      else
        a->text = expect_name();
      n = a;
    } else if (is_op("[")) {
      ++p_;
      NodePtr parts[3];
      int k = 0;
      bool slice = false;
      for (;;) {
        if (is_op("]")) break;
        if (is_op(":")) {
          slice = true;
          if (++k > 2) fail("a slice has at most three parts");
          ++p_;
          continue;
        }
        parts[k] = expression();
      }
      expect_op("]");
      NodePtr s = make(slice ? Node::Kind::kSlice : Node::Kind::kIndex, line);
      s->a = n;
      if (slice)
        s->children = {parts[0], parts[1], parts[2]};
      else if (!parts[0])
        fail("empty subscript []");
      else
        s->b = parts[0];
      n = s;
    } else if (is_op("(")) {
      NodePtr c = make(Node::Kind::kCall, line);
      c->a = n;
      call_args(c);
      n = c;
    } else {
      return n;
    }
  }
}

NodePtr Parser::filters(NodePtr n) {
  for (;;) {
    const int line = peek().line;
    if (is_op("|")) {
      ++p_;
      NodePtr f = make(Node::Kind::kFilter, line);
      f->a = n;
      f->text = expect_name();
      if (is_op("(")) call_args(f);
      n = f;
    } else if (is_name("is")) {
      ++p_;
      NodePtr t = make(Node::Kind::kTest, line);
      t->a = n;
      if (is_name("not")) {
        ++p_;
        t->negate = true;
      }
      t->text = expect_name();
      if (is_op("(")) call_args(t);
      n = t;
    } else {
      return n;
    }
  }
}

NodePtr Parser::primary() {
  const Token& tok = peek();
  NodePtr n;
  if (tok.type == Tok::kString) {
    n = make(Node::Kind::kLiteral, tok.line);
    std::string s;
    while (peek().type == Tok::kString) s += next().text;  // adjacent literals concatenate
    n->value = Value::string(s);
    return n;
  }
  if (tok.type == Tok::kNumber) {
    n = make(Node::Kind::kLiteral, tok.line);
    n->value = tok.is_float ? Value::real(std::stod(tok.text)) : Value::integer(std::stoll(tok.text));
    ++p_;
    return n;
  }
  if (tok.type == Tok::kName) {
    ++p_;
    n = make(Node::Kind::kLiteral, tok.line);
    if (tok.text == "true" || tok.text == "True")
      n->value = Value::boolean(true);
    else if (tok.text == "false" || tok.text == "False")
      n->value = Value::boolean(false);
    else if (tok.text == "none" || tok.text == "None")
      n->value = Value::none();
    else {
      n->kind = Node::Kind::kName;
      n->text = tok.text;
    }
    return n;
  }
  if (is_op("(")) {
    ++p_;
    NodePtr first = expression();
    if (is_op(")")) {
      ++p_;
      return first;
    }
    n = make(Node::Kind::kTuple, tok.line);
    n->children.push_back(first);
    while (is_op(",")) {
      ++p_;
      if (is_op(")")) break;
      n->children.push_back(expression());
    }
    expect_op(")");
    return n;
  }
  if (is_op("[")) {
    ++p_;
    n = make(Node::Kind::kList, tok.line);
    while (!is_op("]")) {
      n->children.push_back(expression());
      if (!is_op("]")) expect_op(",");
    }
    ++p_;
    return n;
  }
  if (is_op("{")) {
    ++p_;
    n = make(Node::Kind::kDict, tok.line);
    while (!is_op("}")) {
      n->children.push_back(expression());
      expect_op(":");
      n->children.push_back(expression());
      if (!is_op("}")) expect_op(",");
    }
    ++p_;
    return n;
  }
  fail("expected an expression, found '" + tok.text + "'");
}

}  // namespace realign::jinja
