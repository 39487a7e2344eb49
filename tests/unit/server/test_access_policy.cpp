// The Host, Origin and token rules of `nodeflow serve` (server/access.hpp),
// without a connection.
#include <gtest/gtest.h>

#include "server/access.hpp"

namespace nodeflow::server {
namespace {

TEST(AccessPolicy, HostMustNameThisServerWithItsPort) {
  const AccessPolicy loopback("127.0.0.1", 8080, "t");
  for (const char* ok : {"127.0.0.1:8080", "localhost:8080", "[::1]:8080"}) EXPECT_TRUE(loopback.host_allowed(ok)) << ok;
  for (const char* bad : {"127.0.0.1", "127.0.0.1:8081", "evil.example:8080", "127.0.0.1:8080x",
                          "127.0.0.1:+8080", ":8080", "", "10.0.0.1:8080", "localhost.evil:8080"})
    EXPECT_FALSE(loopback.host_allowed(bad)) << bad;
  const AccessPolicy named("myhost", 9000, "t");
  EXPECT_TRUE(named.host_allowed("myhost:9000"));
  EXPECT_FALSE(named.host_allowed("otherhost:9000"));
}

TEST(AccessPolicy, AServerOnEveryInterfaceTakesIpLiteralsButNoOtherName) {
  const AccessPolicy all("0.0.0.0", 8080, "t");
  for (const char* ok : {"192.168.1.7:8080", "10.0.0.1:8080", "[fe80::1]:8080", "localhost:8080"})
    EXPECT_TRUE(all.host_allowed(ok)) << ok;
  for (const char* bad : {"evil.example:8080", "192.168.1.7:8081", "1.2.3:8080", "1.2.3.4.5:8080",
                          "256.1.1.1:8080", "[fe80::g]:8080"})
    EXPECT_FALSE(all.host_allowed(bad)) << bad;
}

TEST(AccessPolicy, OriginIsHttpAndAnAllowedHost) {
  const AccessPolicy p("127.0.0.1", 8080, "t");
  EXPECT_TRUE(p.origin_allowed("http://127.0.0.1:8080"));
  EXPECT_TRUE(p.origin_allowed("http://localhost:8080"));
  for (const char* bad : {"https://127.0.0.1:8080", "http://127.0.0.1:8080/", "null", "",
                          "http://evil.example", "http://127.0.0.1:80"})
    EXPECT_FALSE(p.origin_allowed(bad)) << bad;
}

TEST(AccessPolicy, ApiPathsNeedTheTokenStaticOnesDoNot) {
  const AccessPolicy p("127.0.0.1", 8080, "secret");
  const std::string host = "127.0.0.1:8080";
  EXPECT_FALSE(p.check(host, "", false, false, "", ""));
  EXPECT_FALSE(p.check(host, "", false, true, "Bearer secret", ""));
  EXPECT_FALSE(p.check(host, "", false, true, "", "secret"));
  EXPECT_EQ(p.check(host, "", false, true, "", "")->status, 401);
  EXPECT_EQ(p.check(host, "", false, true, "Bearer secreT", "")->status, 401);
  EXPECT_EQ(p.check(host, "", false, true, "Bearer secret2", "")->status, 401);
  // A wrong header is not rescued by a right query.
  EXPECT_EQ(p.check(host, "", false, true, "Bearer wrong", "secret")->status, 401);
  EXPECT_EQ(p.check(host, "http://evil", true, false, "", "")->status, 403);
  EXPECT_EQ(p.check(host, "", true, true, "Bearer secret", "")->status, 403);  // an empty Origin
  EXPECT_EQ(p.check("evil:8080", "", false, true, "Bearer secret", "")->status, 403);
}

TEST(AccessPolicy, RandomTokensAre64HexDigitsAndDiffer) {
  const std::string a = random_token(), b = random_token();
  EXPECT_EQ(a.size(), 64u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace nodeflow::server
