package io.rackwise.yarn.dp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** Each malformed line of the ACL file is refused naming the file, the line and why. */
class DpAclFileTest {
  private static final String KEY = "0123456789abcdef";

  private static String refusal(String text) {
    return assertThrows(IllegalArgumentException.class,
        () -> DpAclFile.parse(text, "dp.acl")).getMessage();
  }

  @Test
  void aGoodFileGivesEachUserTheirRoleAndKey() {
    Map<String, DpAclFile.Entry> users = DpAclFile.parse(
        "# comment\n\nalice user " + KEY + "\n  ops   ADMIN\t" + KEY + "x  \n", "dp.acl");
    assertEquals(new DpAclFile.Entry("alice", DpAclFile.Role.USER, KEY), users.get("alice"));
    assertEquals(new DpAclFile.Entry("ops", DpAclFile.Role.ADMIN, KEY + "x"), users.get("ops"));
    assertEquals(2, users.size());
  }

  @Test
  void malformedLinesAreNamedByNumber() {
    assertEquals("dp.acl line 2: 2 fields where 3 are required (<user> <role> <key>), user "
        + "'bob'", refusal("alice user " + KEY + "\nbob user\n"));
    assertEquals("dp.acl line 1: role 'root' of user 'alice' must be user or admin",
        refusal("alice root " + KEY));
    assertEquals("dp.acl line 3: the key of user 'bob' has 5 characters, fewer than the 16 "
        + "required", refusal("alice user " + KEY + "\n#\nbob user short"));
    assertEquals("dp.acl line 2: user 'alice' has a line already",
        refusal("alice user " + KEY + "\nalice admin " + KEY));
  }
}
