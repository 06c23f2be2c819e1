// Appending forms of hlo_attributes.h's ToString functions for the printer's
// hot path (every instruction line of a snapshot): they write into the
// caller's string instead of building temporaries. ToString is defined
// through them, so the two cannot disagree.
#ifndef PASSLAB_CORE_IR_ATTRIBUTE_APPEND_H_
#define PASSLAB_CORE_IR_ATTRIBUTE_APPEND_H_

#include <string>
#include <string_view>

#include "core/ir/hlo_attributes.h"

namespace passlab {

// CEscape(s), appended to `out`.
void CEscapeAppend(std::string& out, std::string_view s);
// metadata.ToString(), appended to `out`.
void AppendOpMetadata(std::string& out, const OpMetadata& metadata);

}  // namespace passlab

#endif  // PASSLAB_CORE_IR_ATTRIBUTE_APPEND_H_
