// Checks that turn a Python array (NumPy, or any DLPack tensor such as PyTorch / CuPy on CUDA)
// into a pointer the C++ plans may read or write, with errors that name the argument.
#include <sstream>

#include <nanobind/ndarray.h>

#include "bindings.hpp"

namespace fftconv::py {

namespace {

std::string shape_text(const Shape4& s) {
  std::ostringstream o;
  o << "(" << s[0] << ", " << s[1] << ", " << s[2] << ", " << s[3] << ")";
  return o.str();
}

template <class A>
std::string array_shape_text(const A& a) {
  std::ostringstream o;
  o << "(";
  for (size_t i = 0; i < a.ndim(); ++i) o << (i ? ", " : "") << a.shape(i);
  o << (a.ndim() == 1 ? ",)" : ")");
  return o.str();
}

std::string dtype_text(nb::dlpack::dtype d) {
  const char* kind = "?";
  switch (nb::dlpack::dtype_code(d.code)) {
    case nb::dlpack::dtype_code::Int: kind = "int"; break;
    case nb::dlpack::dtype_code::UInt: kind = "uint"; break;
    case nb::dlpack::dtype_code::Float: kind = "float"; break;
    case nb::dlpack::dtype_code::Bfloat: kind = "bfloat"; break;
    case nb::dlpack::dtype_code::Complex: kind = "complex"; break;
    case nb::dlpack::dtype_code::Bool: return "bool";
    default: kind = "dtype code " ; break;
  }
  return std::string(kind) + std::to_string(d.bits);
}

// C-contiguous: strides (in elements) are those of a dense row-major array; sizes-1 dims ignored.
template <class A>
bool c_contiguous(const A& a) {
  if (a.stride_ptr() == nullptr) return true;  // DLPack: null strides mean compact row-major
  int64_t expect = 1;
  for (size_t i = a.ndim(); i-- > 0;) {
    if (a.shape(i) != 1 && a.stride(i) != expect) return false;
    expect *= int64_t(a.shape(i));
  }
  return true;
}

template <class A>
Operand check(const A& a, nb::handle obj, const OperandSpec& spec) {
  const std::string name = spec.name;
  const nb::dlpack::dtype want =
      spec.dtype == DType::f32 ? nb::dtype<float>() : nb::dtype<double>();
  if (a.dtype() != want)
    throw nb::type_error((name + ": expected dtype " + std::string(to_string(spec.dtype)) + ", got " +
                          dtype_text(a.dtype()))
                             .c_str());
  const int want_dev = spec.location == Location::host ? nb::device::cpu::value : nb::device::cuda::value;
  if (a.device_type() != want_dev) {
    const std::string where = spec.location == Location::host ? "host (CPU) memory" : "a CUDA device";
    throw nb::value_error((name + ": expected an array in " + where + " for this backend, got DLPack device type " +
                           std::to_string(a.device_type()))
                              .c_str());
  }
  if (spec.location == Location::cuda && a.device_id() != spec.device)
    throw nb::value_error((name + ": expected a tensor on CUDA device " + std::to_string(spec.device) +
                           ", got device " + std::to_string(a.device_id()))
                              .c_str());
  if (a.ndim() != 4)
    throw nb::value_error((name + ": expected a 4-D array of shape " + shape_text(spec.shape) + ", got ndim=" +
                           std::to_string(a.ndim()) + " shape " + array_shape_text(a))
                              .c_str());
  for (size_t i = 0; i < 4; ++i)
    if (int64_t(a.shape(i)) != spec.shape[i])
      throw nb::value_error(
          (name + ": expected shape " + shape_text(spec.shape) + ", got " + array_shape_text(a)).c_str());
  if (!c_contiguous(a))
    throw nb::value_error((name + ": expected a C-contiguous array (use numpy.ascontiguousarray or "
                                  ".contiguous()), got strides that are not row-major")
                              .c_str());
  Operand op;
  op.data = const_cast<void*>(static_cast<const void*>(a.data()));
  op.bytes = a.nbytes();
  op.keep = nb::borrow(obj);
  op.device = a.device_id();
  if (op.data == nullptr && op.bytes > 0)
    throw nb::value_error((name + ": array has no data").c_str());
  return op;
}

}  // namespace

Operand check_operand(nb::handle obj, const OperandSpec& spec, bool writable) {
  const std::string name = spec.name;
  if (obj.is_none())
    throw nb::type_error((name + ": expected an array, got None").c_str());
  if (writable) {
    nb::ndarray<> a;
    if (!nb::try_cast(obj, a, false)) {
      nb::ndarray<nb::ro> r;
      if (nb::try_cast(obj, r, false))
        throw nb::value_error((name + ": the output array is read-only").c_str());
      throw nb::type_error((name + ": expected a NumPy array or a DLPack tensor, got " +
                            std::string(nb::inst_name(obj).c_str()))
                               .c_str());
    }
    return check(a, obj, spec);
  }
  nb::ndarray<nb::ro> a;
  if (!nb::try_cast(obj, a, false))
    throw nb::type_error((name + ": expected a NumPy array or a DLPack tensor, got " +
                          std::string(nb::inst_name(obj).c_str()))
                             .c_str());
  return check(a, obj, spec);
}

void check_no_alias(const Operand& out, const Operand& in, const char* out_name, const char* in_name) {
  if (!in.data || !out.data) return;
  const auto* o = static_cast<const char*>(out.data);
  const auto* i = static_cast<const char*>(in.data);
  if (o < i + in.bytes && i < o + out.bytes)
    throw nb::value_error((std::string(out_name) + ": must not overlap " + in_name +
                           " (the result is written while the operands are read)")
                              .c_str());
}

DType parse_dtype(std::string_view s) {
  if (s == "float32") return DType::f32;
  if (s == "float64") return DType::f64;
  throw nb::value_error(("dtype: expected 'float32' or 'float64', got '" + std::string(s) + "'").c_str());
}

Location parse_location(std::string_view s) {
  if (s == "host" || s == "cpu") return Location::host;
  if (s == "cuda") return Location::cuda;
  throw nb::value_error(("location: expected 'host' or 'cuda', got '" + std::string(s) + "'").c_str());
}

}  // namespace fftconv::py
