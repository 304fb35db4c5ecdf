package io.rackwise.yarn.config;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;
import org.xml.sax.SAXException;

/**
 * Reads Rackwise's own elements out of fair-scheduler.xml.
 *
 * <p>FairScheduler silently ignores unknown children of {@code <queue>} and keeps no DOM, so we
 * parse the same file a second time. Queue paths are built the way FairScheduler builds them:
 * top-level queues are children of {@code root} unless the file configures {@code root} itself.
 * Only structure is checked here (a {@code <rackwise>} element holds simple child elements, each
 * once); the values are validated by the native core, which owns the parameters.
 */
public final class AllocationFileExtensions {
  public static final String ELEMENT = "rackwise";

  /** One queue of the file; {@code rackwise} is null when the queue has no such element. */
  public static final class QueueExtension {
    private final String queue;
    private final Map<String, String> rackwise;

    QueueExtension(String queue, Map<String, String> rackwise) {
      this.queue = queue;
      this.rackwise = rackwise;
    }

    public String queue() {
      return queue;
    }

    public Map<String, String> rackwise() {
      return rackwise;
    }
  }

  private AllocationFileExtensions() {
  }

  /**
   * Parses an allocation file.
   *
   * @param source the file's name, used in every error message
   */
  public static List<QueueExtension> parse(InputStream in, String source)
      throws RackwiseConfigException {
    Document document;
    try {
      document = secureBuilder().parse(in);
    } catch (SAXException | IOException | ParserConfigurationException e) {
      throw new RackwiseConfigException(source + ": cannot be parsed as XML: " + e.getMessage(),
          e);
    }
    Element root = document.getDocumentElement();
    List<QueueExtension> queues = new ArrayList<>();
    List<String> problems = new ArrayList<>();
    for (Element queue : queueChildren(root)) {
      boolean isRoot = queue.getAttribute("name").trim().equalsIgnoreCase("root");
      collect(queue, isRoot ? null : "root", source, queues, problems);
    }
    List<String> markets = queues.stream()
        .filter(queue -> queue.rackwise() != null
            && DpMarketStructure.DP_POLICY.equals(queue.rackwise().get("policy")))
        .map(QueueExtension::queue)
        .toList();
    DpMarketStructure.check(root, markets, source, problems);
    if (!problems.isEmpty()) {
      throw RackwiseConfigException.of(problems);
    }
    return queues;
  }

  private static void collect(Element queue, String parent, String source,
      List<QueueExtension> out, List<String> problems) {
    String name = queue.getAttribute("name").trim();
    String path = parent == null ? name : parent + "." + name;
    Map<String, String> rackwise = null;
    for (Element child : elementChildren(queue)) {
      if (!child.getTagName().equals(ELEMENT)) {
        continue;
      }
      if (rackwise != null) {
        problems.add(source + ": queue " + path + " <" + ELEMENT
            + ">: appears more than once; a queue has at most one");
        continue;
      }
      rackwise = new LinkedHashMap<>();
      for (Element parameter : elementChildren(child)) {
        String key = parameter.getTagName();
        if (!elementChildren(parameter).isEmpty()) {
          problems.add(source + ": queue " + path + " <" + ELEMENT + "><" + key
              + ">: must hold text, not nested elements");
        } else if (rackwise.containsKey(key)) {
          problems.add(source + ": queue " + path + " <" + ELEMENT + "><" + key
              + ">: appears more than once");
        } else {
          rackwise.put(key, parameter.getTextContent().trim());
        }
      }
    }
    out.add(new QueueExtension(path, rackwise));
    boolean market = rackwise != null
        && DpMarketStructure.DP_POLICY.equals(rackwise.get("policy"));
    for (Element child : queueChildren(queue)) {
      if (market) {
        DpMarketStructure.checkChild(child, path + "." + child.getAttribute("name").trim(), path,
            source, problems);
      }
      collect(child, path, source, out, problems);
    }
  }

  /** {@code <queue>} children, and {@code <pool>}, FairScheduler's old name for a queue. */
  static List<Element> queueChildren(Element parent) {
    List<Element> queues = new ArrayList<>();
    for (Element child : elementChildren(parent)) {
      if (child.getTagName().equals("queue") || child.getTagName().equals("pool")) {
        queues.add(child);
      }
    }
    return queues;
  }

  static List<Element> elementChildren(Element parent) {
    List<Element> children = new ArrayList<>();
    NodeList nodes = parent.getChildNodes();
    for (int i = 0; i < nodes.getLength(); i++) {
      Node node = nodes.item(i);
      if (node instanceof Element) {
        children.add((Element) node);
      }
    }
    return children;
  }

  /** An XML parser that refuses DOCTYPEs and external entities (XXE), as FairScheduler's does. */
  private static DocumentBuilder secureBuilder() throws ParserConfigurationException {
    DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
    factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
    factory.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
    factory.setXIncludeAware(false);
    factory.setExpandEntityReferences(false);
    factory.setIgnoringComments(true);
    return factory.newDocumentBuilder();
  }
}
