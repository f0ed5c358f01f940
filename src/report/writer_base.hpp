// Interface of the report writers: each renders the one result record (result.hpp) into one
// file format. Callers use write(); formats implement do_write() (nvbench's printer_base).
#pragma once

#include <iosfwd>
#include <string>

#include "report/result.hpp"

namespace attnbench {

class writer_base {
 public:
  virtual ~writer_base();
  writer_base(const writer_base&) = delete;
  writer_base& operator=(const writer_base&) = delete;

  // Short format name, as given to make_writers: "json", "csv", "md".
  std::string name() const { return name_; }
  void write(const run_result& result, std::ostream& out) const { do_write(result, out); }
  // File name of this format inside the output directory, e.g. "results.json".
  virtual std::string file_name() const = 0;

 protected:
  explicit writer_base(std::string name) : name_(std::move(name)) {}
  virtual void do_write(const run_result& result, std::ostream& out) const = 0;

 private:
  std::string name_;
};

}  // namespace attnbench
