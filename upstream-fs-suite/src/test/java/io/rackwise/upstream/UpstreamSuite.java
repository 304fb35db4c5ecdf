package io.rackwise.upstream;

import io.rackwise.yarn.bridge.MapReducePriority;
import io.rackwise.yarn.config.AllocationFileExtensions;
import io.rackwise.yarn.config.ShimSettings;
import io.rackwise.yarn.stats.JobStatsPoller;
import java.io.File;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.transform.OutputKeys;
import javax.xml.transform.TransformerFactory;
import javax.xml.transform.dom.DOMSource;
import javax.xml.transform.stream.StreamResult;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairSchedulerConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.RackwiseFairScheduler;
import org.mockito.Mockito;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * What the rewritten upstream sources call instead of the text they had (see
 * {@code src/build/RewriteUpstreamTests.java}): the scheduler under test and the suite's mode,
 * chosen per surefire execution by two system properties. In {@link Mode#PASSTHROUGH} every hook
 * but the scheduler choice returns exactly what the upstream text did.
 */
public final class UpstreamSuite {
  /** {@code stock} (Hadoop's FairScheduler, the baseline) or {@code rackwise}. */
  public static final String SCHEDULER_PROPERTY = "rackwise.upstream.scheduler";
  /** One of {@link Mode}, in lower case with dashes. */
  public static final String MODE_PROPERTY = "rackwise.upstream.mode";
  /** A directory for the root-only allocation file of the steering modes. */
  public static final String DIR_PROPERTY = "rackwise.upstream.dir";

  /** The policy the steering modes put on root. */
  static final String ROOT_POLICY = "shufflewatcher";

  enum Mode {
    /** No {@code <rackwise>} anywhere: the core runs and steers nothing. */
    PASSTHROUGH,
    /** {@code <rackwise><policy>shufflewatcher</policy></rackwise>} on root, apps MAPREDUCE. */
    SHUFFLEWATCHER,
    /** As SHUFFLEWATCHER, and the base class's asks at MapReduce's task priorities. */
    SHUFFLEWATCHER_MR_PRIORITIES;

    boolean steers() {
      return this != PASSTHROUGH;
    }
  }

  private static final boolean RACKWISE = readScheduler();
  private static final Mode MODE = readMode();

  private UpstreamSuite() {
  }

  private static boolean readScheduler() {
    String value = System.getProperty(SCHEDULER_PROPERTY);
    if ("rackwise".equals(value)) {
      return true;
    }
    if ("stock".equals(value)) {
      return false;
    }
    throw new IllegalStateException(SCHEDULER_PROPERTY + "=" + value
        + ": must be stock or rackwise (set by each surefire execution of upstream-fs-suite)");
  }

  private static Mode readMode() {
    String value = System.getProperty(MODE_PROPERTY);
    for (Mode mode : Mode.values()) {
      if (mode.name().toLowerCase(Locale.ROOT).replace('_', '-').equals(value)) {
        return mode;
      }
    }
    throw new IllegalStateException(MODE_PROPERTY + "=" + value
        + ": must be passthrough, shufflewatcher or shufflewatcher-mr-priorities");
  }

  /**
   * The configuration the base class starts from. Rackwise runs with the native core required,
   * so that a native failure fails the test instead of falling back to stock FairScheduler and
   * passing. The steering modes name a root-only allocation file (root with the policy), used
   * by every test that does not set an allocation file of its own.
   */
  public static YarnConfiguration configuration() {
    YarnConfiguration conf = new YarnConfiguration();
    if (RACKWISE) {
      conf.setBoolean(ShimSettings.NATIVE_REQUIRED, true);
    }
    if (MODE.steers()) {
      conf.set(FairSchedulerConfiguration.ALLOCATION_FILE, rootOnlyAllocationFile());
    }
    return conf;
  }

  public static Class<? extends FairScheduler> schedulerClass() {
    return RACKWISE ? RackwiseFairScheduler.class : FairScheduler.class;
  }

  public static FairScheduler newScheduler() {
    return RACKWISE ? new RackwiseFairScheduler() : new FairScheduler();
  }

  /**
   * The priority of an ask the base class builds. With MapReduce priorities, the shift that
   * makes priority 1 (the base class's default) MapReduce's map priority; it keeps the order
   * of every pair of priorities, which FairScheduler serves by.
   */
  public static int priority(int upstream) {
    return MODE == Mode.SHUFFLEWATCHER_MR_PRIORITIES
        ? upstream + MapReducePriority.MAP - 1 : upstream;
  }

  /**
   * The application type of an RM app a test creates or submits, in place of the type the
   * upstream text gives it ({@code upstream}): MapReduce when steering, so that every app the
   * tests run reaches the steering path; otherwise unchanged. The one place the suite types
   * apps: the base class's mocked and real apps, the app {@code testNotAllowSubmitApplication}
   * builds and the one {@code testRefreshQueuesWhenRMHA} submits through {@code MockRM}.
   */
  public static String applicationType(String upstream) {
    return MODE.steers() ? JobStatsPoller.MAPREDUCE_APPLICATION_TYPE : upstream;
  }

  /** A mocked RM app, of the mode's application type. */
  public static <T extends RMApp> T mockApp(Class<T> type) {
    T app = Mockito.mock(type);
    if (MODE.steers()) {
      Mockito.when(app.getApplicationType()).thenReturn(applicationType(null));
    }
    return app;
  }

  /**
   * The base class registers its mocked RM app after the scheduler has added the app and its
   * attempt; a real RM registers it before, and the scheduler reads the app's type when the
   * attempt is added. When steering, a mocked app of the mode's type is registered first (the
   * base class's own replaces it later).
   */
  public static void beforeAppAdded(ResourceManager rm, ApplicationAttemptId attempt) {
    if (MODE.steers()) {
      ApplicationId app = attempt.getApplicationId();
      rm.getRMContext().getRMApps().putIfAbsent(app, mockApp(RMApp.class));
    }
  }

  /**
   * A test wrote an allocation file: when steering, root gets the policy. Top-level queues are
   * root's children whether or not the file names root, so a file without root gets a root
   * element around its queues; a file that names root gets the element in it. A file
   * FairScheduler would refuse (not XML, root beside other top-level queues) is left as the
   * test wrote it.
   */
  public static void allocationFileWritten(String filename) {
    if (!MODE.steers()) {
      return;
    }
    try {
      File file = new File(filename);
      Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(file);
      Element allocations = doc.getDocumentElement();
      List<Element> topQueues = new ArrayList<>();
      for (Node child = allocations.getFirstChild(); child != null;
          child = child.getNextSibling()) {
        if (child instanceof Element element
            && (element.getTagName().equals("queue") || element.getTagName().equals("pool"))) {
          topQueues.add(element);
        }
      }
      Element root = rootOf(doc, allocations, topQueues);
      if (root == null) {
        return;
      }
      root.appendChild(policyElement(doc));
      write(doc, file);
    } catch (org.xml.sax.SAXException e) {
      // Not XML on purpose (a test of the loader's errors): FairScheduler refuses it as written.
    } catch (Exception e) {
      throw new IllegalStateException("cannot add <rackwise> to " + filename, e);
    }
  }

  /** The file's root queue element, made if the file has none; null if root is misplaced. */
  private static Element rootOf(Document doc, Element allocations, List<Element> topQueues) {
    boolean namesRoot = topQueues.stream()
        .anyMatch(q -> q.getAttribute("name").trim().equalsIgnoreCase("root"));
    if (namesRoot) {
      return topQueues.size() == 1 ? topQueues.get(0) : null;
    }
    Element root = doc.createElement("queue");
    root.setAttribute("name", "root");
    allocations.insertBefore(root, topQueues.isEmpty() ? null : topQueues.get(0));
    for (Element queue : topQueues) {
      root.appendChild(queue);
    }
    return root;
  }

  private static Element policyElement(Document doc) {
    Element rackwise = doc.createElement(AllocationFileExtensions.ELEMENT);
    Element policy = doc.createElement("policy");
    policy.setTextContent(ROOT_POLICY);
    rackwise.appendChild(policy);
    return rackwise;
  }

  private static void write(Document doc, File file) throws Exception {
    var transformer = TransformerFactory.newInstance().newTransformer();
    transformer.setOutputProperty(OutputKeys.ENCODING, "UTF-8");
    transformer.transform(new DOMSource(doc), new StreamResult(file));
  }

  private static synchronized String rootOnlyAllocationFile() {
    String dir = System.getProperty(DIR_PROPERTY);
    if (dir == null) {
      throw new IllegalStateException(DIR_PROPERTY + " is not set (set by each surefire "
          + "execution of upstream-fs-suite)");
    }
    File file = new File(dir, "root-" + ROOT_POLICY + ".xml");
    if (!file.exists()) {
      try {
        Files.createDirectories(file.getParentFile().toPath());
        Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().newDocument();
        Element allocations = doc.createElement("allocations");
        doc.appendChild(allocations);
        rootOf(doc, allocations, List.of()).appendChild(policyElement(doc));
        write(doc, file);
      } catch (Exception e) {
        throw new IllegalStateException("cannot write " + file, e);
      }
    }
    return file.getAbsolutePath();
  }
}
