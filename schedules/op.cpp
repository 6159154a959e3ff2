#include "schedules/op.hpp"

namespace pipesim {

std::string_view op_kind_name(OpKind kind) {
  switch (kind) {
    case OpKind::F: return "F";
    case OpKind::B: return "B";
    case OpKind::I: return "I";
    case OpKind::W: return "W";
    case OpKind::GradSync: return "GRADSYNC";
    case OpKind::OptStep: return "OPT";
    case OpKind::SendF: return "SEND_F";
    case OpKind::RecvF: return "RECV_F";
    case OpKind::SendB: return "SEND_B";
    case OpKind::RecvB: return "RECV_B";
  }
  return "?";
}

}  // namespace pipesim
