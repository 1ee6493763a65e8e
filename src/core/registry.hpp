// Implementations chosen by name from the config (as Ramulator 2's `impl:`).
//
// A *policy kind* (a KV layout, an error model, a timing granularity, ...) has
// named implementations. Each kind keeps one Registry: a table of
// {name, one-line description, value}, where the value is what the name stands
// for: an enum tag (when the policy is a branch inside one mechanism and a
// class per choice would be overkill) or a factory (when each choice is a class
// implementing the kind's interface). The table is written next to the
// implementations it lists, in their .cpp, and declared where the parameter
// that selects it is declared:
//
//   // llm/params.hpp
//   enum class KvLayout { FlashAccel, Scatter };
//   const Registry<KvLayout>& kv_layouts();  // defined in llm/memory.cpp
//   ...  Choice<KvLayout, kv_layouts> kv_layout;   // in ServingParams, declared in visit() as usual
//
//   // llm/memory.cpp, beside the two layouts
//   const Registry<KvLayout>& kv_layouts() {
//     static const Registry<KvLayout> r("KV layout", {
//         {"flashaccel", "hyperpage-packed runs per request, selective offload", KvLayout::FlashAccel},
//         {"scatter", "plane-oblivious paged KV on random megaplanes", KvLayout::Scatter},
//     });
//     return r;
//   }
//
// The config value is resolved once, when the config is loaded (ParamLoader
// calls Choice::named): a bad name is a ConfigError naming the key, the value,
// the choices and the closest one ("did you mean"). The code that uses a policy
// then switches on the enum (a switch without `default:`, so -Wswitch flags a
// new enum value left unhandled) or calls the factory; it never compares
// strings. The same table drives `bitline describe` (every choice with its
// description under its key, and `describe --impls`) and the resolved-config
// dump (the name).
//
// Why function-local const tables and not Ramulator-style self-registration
// (a global registrar object per class that inserts into a global map while
// static objects are constructed):
//  - nothing is mutable: the table is built once, on first use (C++11
//    guarantees a thread-safe initialisation of a function-local static), and
//    is const from then on. Two simulations in one process, tests in any order
//    and worker threads all read the same immutable data;
//  - no static-initialisation-order problem, and no registrar that silently
//    never runs: bitline_lib is a static archive, and the linker drops an object
//    file nobody references, registrar included;
//  - the parameter names its table at compile time (Choice<T, table>), so the
//    loader, describe, the dump and the error messages read the same list.
// The price: adding an implementation means adding one line to its kind's
// table, in the same file as the implementation (docs/architecture.md, "Extending").
#pragma once

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace bitline {

/// Levenshtein distance, ignoring case (for "did you mean").
size_t edit_distance(std::string_view a, std::string_view b);
/// The candidate nearest to `s` within `max_distance` edits (the first of equals), or empty.
std::string_view closest_name(std::string_view s, const std::vector<std::string_view>& candidates, size_t max_distance = 2);

/// One named implementation of a policy kind.
template <class T>
struct Impl {
  std::string_view name;
  std::string_view desc;  // one line, shown by `bitline describe`
  T value;
};

/// The names and descriptions of a kind's implementations, without their values:
/// what describe lists and what lookups and their error messages need.
class ImplList {
 public:
  std::string_view kind() const { return kind_; }
  size_t size() const { return names_.size(); }
  const std::vector<std::string_view>& names() const { return names_; }
  const std::vector<std::string_view>& descriptions() const { return descs_; }
  /// "a|b|c".
  std::string joined(std::string_view sep = "|") const;
  /// Position of `name`; -1 when it is not registered.
  int64_t find(std::string_view name) const;
  /// "'x' is not one of a|b|c (KIND); did you mean 'y'?": why `name` is not a registered name.
  std::string unknown_message(std::string_view name) const;
  /// Position of `name`; otherwise ConfigError "KEY: 'x' is not one of a|b|c; did you mean 'y'?"
  /// (without "KEY: " when `key` is empty: the config loader adds the file, line and key itself).
  size_t index_of(std::string_view name, std::string_view key = {}) const;

 protected:
  ImplList(std::string_view kind, std::vector<std::string_view> names, std::vector<std::string_view> descs);

 private:
  std::string_view kind_;
  std::vector<std::string_view> names_, descs_;
};

/// The implementations of one kind, each with the value its name stands for.
/// Built once (a function-local `static const`, see above); names must be unique
/// and every implementation needs a description (std::logic_error otherwise:
/// a programming error, caught by the registry tests).
template <class T>
class Registry : public ImplList {
 public:
  Registry(std::string_view kind, std::initializer_list<Impl<T>> impls)
      : ImplList(kind, names_of(impls), descs_of(impls)), values_(values_of(impls)) {}

  const T& value(size_t i) const { return values_.at(i); }
  /// The value registered under `name`; ConfigError (see index_of) for any other name.
  const T& at(std::string_view name, std::string_view key = {}) const { return values_[index_of(name, key)]; }

 private:
  static std::vector<std::string_view> names_of(std::initializer_list<Impl<T>> l) {
    std::vector<std::string_view> v;
    for (const auto& i : l) v.push_back(i.name);
    return v;
  }
  static std::vector<std::string_view> descs_of(std::initializer_list<Impl<T>> l) {
    std::vector<std::string_view> v;
    for (const auto& i : l) v.push_back(i.desc);
    return v;
  }
  static std::vector<T> values_of(std::initializer_list<Impl<T>> l) {
    std::vector<T> v;
    for (const auto& i : l) v.push_back(i.value);
    return v;
  }
  std::vector<T> values_;
};

/// A config value that selects one implementation of a kind from the table
/// `Table()`. Declared in a parameter struct's visit() like any parameter (its
/// `.def` is a registered name; `.choices` is not needed: the table lists them).
/// Holds the position in the table: copying and comparing are free, and the
/// name and value are always a registered pair.
template <class T, const Registry<T>& (*Table)()>
class Choice {
 public:
  using value_type = T;
  static const Registry<T>& registry() { return Table(); }

  /// The first registered implementation (the config loader always sets the declared default).
  Choice() = default;
  /// For enum kinds: the implementation registered with value `v` (std::logic_error when none is).
  Choice(T v) requires std::is_enum_v<T> {
    const auto& r = registry();
    for (size_t i = 0; i < r.size(); ++i)
      if (r.value(i) == v) {
        index_ = uint32_t(i);
        return;
      }
    throw std::logic_error(std::string("no ") + std::string(r.kind()) + " is registered for this value");
  }
  /// By name; ConfigError naming `key`, the value and the choices for an unknown name.
  static Choice named(std::string_view name, std::string_view key = {}) {
    Choice c;
    c.index_ = uint32_t(registry().index_of(name, key));
    return c;
  }

  const T& value() const { return registry().value(index_); }
  const T& operator*() const { return value(); }
  std::string_view name() const { return registry().names()[index_]; }
  std::string_view description() const { return registry().descriptions()[index_]; }
  /// For factory kinds: builds the implementation.
  template <class... A>
  auto make(A&&... args) const requires std::is_invocable_v<const T&, A...> {
    return value()(std::forward<A>(args)...);
  }
  bool operator==(const Choice&) const = default;

 private:
  uint32_t index_ = 0;
};

template <class X>
struct is_choice : std::false_type {};
template <class T, const Registry<T>& (*R)()>
struct is_choice<Choice<T, R>> : std::true_type {};
template <class X>
inline constexpr bool is_choice_v = is_choice<X>::value;

}  // namespace bitline
