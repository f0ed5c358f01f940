#include "report/writer_base.hpp"

namespace attnbench {

// Defined out of line so the vtable is emitted in one translation unit.
writer_base::~writer_base() = default;

}  // namespace attnbench
