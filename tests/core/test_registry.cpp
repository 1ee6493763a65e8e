// The registry of implementations chosen by name (core/registry.hpp): lookup,
// the error for an unknown name, the Choice parameter type in the loader,
// describe and the dump, and the tables' own consistency checks.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "core/config.hpp"
#include "core/error.hpp"
#include "core/param_dump.hpp"
#include "core/params.hpp"
#include "core/registry.hpp"

using namespace bitline;

namespace {

// A kind of the tests' own: an enum policy ...
enum class Colour { Red, Green, Blue };
const Registry<Colour>& colours() {
  static const Registry<Colour> r(
      "colour",
      {{"red", "the first one", Colour::Red}, {"green", "the second one", Colour::Green}, {"blue", "the third one", Colour::Blue}});
  return r;
}

// ... and an interface with two implementations built by factories.
class Shape {
 public:
  virtual ~Shape() = default;
  virtual int corners() const = 0;
};
class Square final : public Shape {
 public:
  int corners() const override { return 4; }
};
class Triangle final : public Shape {
 public:
  int corners() const override { return 3; }
};
using ShapeFactory = std::unique_ptr<Shape> (*)();
const Registry<ShapeFactory>& shapes() {
  static const Registry<ShapeFactory> r(
      "shape", {{"square", "four corners", [] { return std::unique_ptr<Shape>(std::make_unique<Square>()); }},
                {"triangle", "three corners", [] { return std::unique_ptr<Shape>(std::make_unique<Triangle>()); }}});
  return r;
}

struct PolicyParams {
  Choice<Colour, colours> colour;
  Choice<ShapeFactory, shapes> shape;
  template <class V>
  void visit(V& v) {
    v(colour, {.name = "colour", .def = "green", .desc = "which colour", .source = "test"});
    v(shape, {.name = "shape", .def = "triangle", .desc = "which shape", .source = "test"});
  }
};

PolicyParams load_text(const std::string& yaml) {
  ConfigTree t;
  t.load_text(yaml, "t.yaml");
  return load_params<PolicyParams>(t, "test");
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no ConfigError)";
}

bool has(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

}  // namespace

TEST(Registry, LooksUpNamesValuesAndDescriptions) {
  const auto& r = colours();
  EXPECT_EQ(r.kind(), "colour");
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r.joined(), "red|green|blue");
  EXPECT_EQ(r.find("green"), 1);
  EXPECT_EQ(r.find("GREEN"), -1);  // names are exact
  EXPECT_EQ(r.find(""), -1);
  EXPECT_EQ(r.at("blue"), Colour::Blue);
  EXPECT_EQ(r.index_of("red"), 0u);
  EXPECT_EQ(r.descriptions()[2], "the third one");
  // The same table object every time: built once.
  EXPECT_EQ(&colours(), &r);
}

TEST(Registry, UnknownNameNamesTheKeyTheValueAndTheChoices) {
  const std::string e = error_of([] { colours().at("gren", "paint.colour"); });
  EXPECT_TRUE(has(e, "paint.colour: ")) << e;
  EXPECT_TRUE(has(e, "'gren' is not one of red|green|blue")) << e;
  EXPECT_TRUE(has(e, "(colour)")) << e;
  EXPECT_TRUE(has(e, "did you mean 'green'?")) << e;
  // Far from every name: no suggestion, still the choices.
  const std::string far = error_of([] { colours().at("ultraviolet", "paint.colour"); });
  EXPECT_TRUE(has(far, "'ultraviolet' is not one of red|green|blue")) << far;
  EXPECT_FALSE(has(far, "did you mean")) << far;
  // Case differences count as near misses, not matches.
  EXPECT_TRUE(has(error_of([] { colours().at("Blue"); }), "did you mean 'blue'?"));
}

TEST(Registry, TablesMustBeWellFormed) {
  using R = Registry<int>;
  EXPECT_THROW(R("x", {}), std::logic_error);
  EXPECT_THROW(R("x", {{"a", "one", 1}, {"a", "again", 2}}), std::logic_error);
  EXPECT_THROW(R("x", {{"a", "", 1}}), std::logic_error);
  EXPECT_THROW(R("x", {{"", "nameless", 1}}), std::logic_error);
  EXPECT_NO_THROW(R("x", {{"a", "one", 1}, {"b", "two", 1}}));  // two names may stand for one value
}

TEST(Registry, ChoiceHoldsARegisteredPair) {
  using C = Choice<Colour, colours>;
  EXPECT_EQ(C().name(), "red");  // default-constructed: the first entry
  const C g = C::named("green");
  EXPECT_EQ(*g, Colour::Green);
  EXPECT_EQ(g.description(), "the second one");
  const C b = Colour::Blue;  // from the enum value
  EXPECT_EQ(b.name(), "blue");
  EXPECT_EQ(b, C::named("blue"));
  EXPECT_NE(b, g);
  EXPECT_TRUE(has(error_of([] { C::named("purple", "k"); }), "k: 'purple' is not one of red|green|blue"));
  // Factories: make() builds the chosen implementation.
  using S = Choice<ShapeFactory, shapes>;
  EXPECT_EQ(S::named("square").make()->corners(), 4);
  EXPECT_EQ(S::named("triangle").make()->corners(), 3);
}

TEST(Registry, TheLoaderResolvesChoicesOnceWithFileLineAndKey) {
  const PolicyParams d = load_text("");
  EXPECT_EQ(*d.colour, Colour::Green);  // the declared default
  EXPECT_EQ(d.shape.make()->corners(), 3);
  const PolicyParams p = load_text("test:\n  colour: blue\n  shape: square\n");
  EXPECT_EQ(*p.colour, Colour::Blue);
  EXPECT_EQ(p.shape.make()->corners(), 4);
  const std::string e = error_of([] { load_text("test:\n  colour: bleu\n"); });
  EXPECT_TRUE(has(e, "t.yaml:2: test.colour: 'bleu' is not one of red|green|blue (colour); did you mean 'blue'?")) << e;
  EXPECT_TRUE(has(error_of([] { load_text("test:\n  shape: [square]\n"); }), "test.shape: expected a string value"));
}

TEST(Registry, DescribeListsEveryChoiceAndTheDumpWritesTheName) {
  const auto rows = describe_params<PolicyParams>("test");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].path, "test.colour");
  EXPECT_EQ(rows[0].type, "choice");
  EXPECT_EQ(rows[0].kind, "colour");
  EXPECT_EQ(rows[0].range, "red|green|blue");
  EXPECT_EQ(rows[0].def, "green");
  ASSERT_EQ(rows[0].choices.size(), 3u);
  EXPECT_EQ(rows[0].choices[1].name, "green");
  EXPECT_EQ(rows[0].choices[1].desc, "the second one");
  EXPECT_EQ(rows[1].choices[0].name, "square");
  const nlohmann::json j = dump_params(load_text("test: {colour: red, shape: square}"));
  EXPECT_EQ(j["colour"], "red");
  EXPECT_EQ(j["shape"], "square");
}

TEST(Registry, DidYouMeanHelpers) {
  EXPECT_EQ(edit_distance("scater", "scatter"), 1u);
  EXPECT_EQ(edit_distance("ABC", "abc"), 0u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(closest_name("fil", {"mean", "fill"}), "fill");
  EXPECT_EQ(closest_name("zzzzzz", {"mean", "fill"}), "");
}
