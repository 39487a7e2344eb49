#pragma once
// cpp-httplib (Debian's libcpp-httplib-dev 0.11), the server's one HTTP
// library. Every file of server/ includes it through this header.
#include <httplib.h>

// httplib.h includes <resolv.h>, whose macro `_res` would rewrite Eigen's
// parameters of that name in any header included after it.
#undef _res
