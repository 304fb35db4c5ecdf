package io.rackwise.yarn.config;

import java.util.ArrayList;
import java.util.List;
import org.w3c.dom.Element;

/**
 * Checks that every Dynamic Priority market's children are user queues.
 *
 * <p>A queue whose {@code <rackwise><policy>} is {@code dp} is a market and each of its children
 * a budget queue of one user (the paper's queue = user): a child's budget, spending and share
 * belong to whoever runs in it. FairScheduler decides who runs where, so the allocation file is
 * refused when its structure would put several users, or a whole group, into one child:
 *
 * <ul>
 *   <li>a child configured as a parent queue ({@code type="parent"} or with child queues): the
 *       users below it would share one budget;</li>
 *   <li>a {@code default} placement rule (outside {@code nestedUserQueue}) whose queue is a child
 *       of the market: every user it catches lands in that one child;</li>
 *   <li>a {@code primaryGroup} or {@code secondaryGroupExistingQueue} rule (alone or as the
 *       parent rule of {@code nestedUserQueue}) under a market on {@code root}: it makes or
 *       uses one child of root per group.</li>
 * </ul>
 *
 * <p>What is allowed: user queues made by placement ({@code user} under a market on root,
 * {@code nestedUserQueue} with {@code <rule name="default" queue="MARKET"/>} inside), and leaf
 * children listed by name (each then belongs to the user of that name, and
 * {@code aclSubmitApps} keeps the others out). The policy name is the core's; the core checks
 * the values, this check only sees the structure FairScheduler builds from the same file.
 */
final class DpMarketStructure {
  static final String DP_POLICY = "dp";
  private static final String PLACEMENT_POLICY = "queuePlacementPolicy";
  private static final List<String> GROUP_RULES =
      List.of("primaryGroup", "secondaryGroupExistingQueue");

  private DpMarketStructure() {
  }

  /** The allocation file's problems with its markets, added to {@code problems}. */
  static void check(Element allocations, List<String> markets, String source,
      List<String> problems) {
    for (String market : markets) {
      for (Element rule : rules(allocations)) {
        checkRule(rule, false, market, source, problems);
      }
    }
  }

  /** A child queue of a market: refused if it is a parent queue. */
  static void checkChild(Element child, String childPath, String market, String source,
      List<String> problems) {
    boolean parent = "parent".equalsIgnoreCase(child.getAttribute("type").trim())
        || !AllocationFileExtensions.queueChildren(child).isEmpty();
    if (parent) {
      problems.add(source + ": queue " + childPath + ": a child of the Dynamic Priority market "
          + market + " must be one user's leaf queue, but it is a parent queue (type=\"parent\" "
          + "or child queues), so the users below it would share one budget");
    }
  }

  private static List<Element> rules(Element allocations) {
    List<Element> rules = new ArrayList<>();
    for (Element child : AllocationFileExtensions.elementChildren(allocations)) {
      if (child.getTagName().equals(PLACEMENT_POLICY)) {
        for (Element rule : AllocationFileExtensions.elementChildren(child)) {
          if (rule.getTagName().equals("rule")) {
            rules.add(rule);
          }
        }
      }
    }
    return rules;
  }

  private static void checkRule(Element rule, boolean nested, String market, String source,
      List<String> problems) {
    String name = rule.getAttribute("name").trim();
    if (name.equals("nestedUserQueue")) {
      for (Element inner : AllocationFileExtensions.elementChildren(rule)) {
        if (inner.getTagName().equals("rule")) {
          checkRule(inner, true, market, source, problems);
        }
      }
    } else if (name.equals("default") && !nested) {
      String queue = fullName(rule.getAttribute("queue").trim());
      if (parentOf(queue).equals(market)) {
        problems.add(source + ": <" + PLACEMENT_POLICY + "> rule default queue=\"" + queue
            + "\": puts every user it places into " + queue + ", one child of the Dynamic "
            + "Priority market " + market + ", but a market's child is one user's budget queue; "
            + "use <rule name=\"nestedUserQueue\"><rule name=\"default\" queue=\"" + market
            + "\"/></rule> for a queue per user");
      }
    } else if (GROUP_RULES.contains(name) && market.equals("root")) {
      problems.add(source + ": <" + PLACEMENT_POLICY + "> rule " + name + ": makes one child "
          + "of root per group, but root is a Dynamic Priority market whose children must each "
          + "be one user's budget queue; put the market on a parent queue of its own");
    }
  }

  /** FairScheduler's resolution of a rule's queue name: relative names are under root. */
  private static String fullName(String queue) {
    String name = queue.isEmpty() ? "default" : queue;
    return name.equals("root") || name.startsWith("root.") ? name : "root." + name;
  }

  private static String parentOf(String queue) {
    int dot = queue.lastIndexOf('.');
    return dot < 0 ? "" : queue.substring(0, dot);
  }
}
