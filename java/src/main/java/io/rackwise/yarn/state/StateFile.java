package io.rackwise.yarn.state;

import java.io.ByteArrayOutputStream;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileContext;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One file of Rackwise state that is replaced whole (or, for a journal, appended to; see
 * {@link #append}), through Hadoop's {@link FileSystem}: on the RM's local disk ({@code file://}) for a single RM, or on HDFS
 * ({@code hdfs://}) so that both RMs of an HA pair read and write the same file and the standby
 * continues from what the active wrote.
 *
 * <p>A replacement is written to a temporary file in the same directory, synced to stable
 * storage ({@code hsync}: the local disk, or every DataNode of the pipeline), closed, and renamed
 * over the old file in one atomic step, so a crash, a killed RM or a full disk leaves either the
 * old content or the new, never a mix. The file system must rename atomically: the local file
 * system and HDFS do; object stores (s3a, abfs without HNS) do not and must not hold state.
 *
 * <p>The local file system is used without Hadoop's checksum layer: a {@code .crc} side file
 * would be a second file to keep in step with each rename, and the JSON inside is validated by
 * its reader anyway.
 *
 * <p>Paths without a scheme are local ({@code file://}), whatever {@code fs.defaultFS} says:
 * {@code state.dir=/var/lib/rackwise} meant the RM's disk before HDFS paths were accepted, and
 * must not silently move to HDFS on a cluster whose default file system is HDFS.
 */
public final class StateFile {

  private static final Logger LOG = LoggerFactory.getLogger(StateFile.class);

  static final String TEMP_SUFFIX = ".tmp";
  static final String CORRUPT_INFIX = ".corrupt-";

  /** Test seam: runs after the temporary file is complete and before the rename. */
  interface BeforeRename {
    void run(Path tempFile) throws IOException;
  }

  private final Path file;
  private final Path dir;
  private final Configuration conf;
  private volatile BeforeRename beforeRename = tmp -> { };

  /**
   * @param dir  the state directory (scheme-less means local), created on the first write
   * @param name the file's name inside it
   */
  public StateFile(Path dir, String name, Configuration conf) {
    this.dir = qualify(dir);
    this.file = new Path(this.dir, name);
    this.conf = conf;
  }

  /** {@code dir} with {@code file://} when it names no scheme (see the class comment). */
  static Path qualify(Path dir) {
    URI uri = dir.toUri();
    if (uri.getScheme() != null) {
      return dir;
    }
    return new Path("file", null, uri.getPath());
  }

  public Path path() {
    return file;
  }

  private FileSystem fs() throws IOException {
    FileSystem fs = file.getFileSystem(conf);
    return fs instanceof LocalFileSystem local ? local.getRawFileSystem() : fs;
  }

  /** The whole content, or empty when the file does not exist. */
  public Optional<byte[]> read() throws IOException {
    FileSystem fs = fs();
    try (InputStream in = fs.open(file)) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      in.transferTo(out);
      return Optional.of(out.toByteArray());
    } catch (FileNotFoundException e) {
      return Optional.empty();
    }
  }

  /** Replaces the content atomically and durably (see the class comment). */
  public void replace(byte[] content) throws IOException {
    FileSystem fs = fs();
    fs.mkdirs(dir);
    // Same directory as the target: a rename is only atomic within one file system; a unique
    // name so that two writers (an RM that has not yet noticed it lost the active role, and
    // the new active) never write into one temporary file.
    Path tmp = new Path(dir, file.getName() + "." + UUID.randomUUID() + TEMP_SUFFIX);
    try {
      try (FSDataOutputStream out = fs.create(tmp, false)) {
        out.write(content);
        // Data on stable storage before the rename makes it visible; otherwise a power cut
        // right after the rename could leave the name pointing at an empty file.
        out.hsync();
      }
      beforeRename.run(tmp);
      renameOver(fs, tmp);
    } finally {
      try {
        fs.delete(tmp, false);
      } catch (IOException e) {
        LOG.warn("Cannot delete temporary file {}: {}", tmp, e.toString());
      }
    }
    if (fs instanceof RawLocalFileSystem) {
      syncLocalDirectory(fs);
    }
  }

  private void renameOver(FileSystem fs, Path tmp) throws IOException {
    if (fs instanceof RawLocalFileSystem) {
      // rename(2): replaces the target atomically.
      if (!fs.rename(tmp, file)) {
        throw new IOException("cannot rename " + tmp + " to " + file);
      }
      return;
    }
    // FileSystem.rename refuses an existing target on HDFS; FileContext's OVERWRITE is the
    // public atomic replace (HDFS rename2).
    FileContext.getFileContext(fs.getUri(), conf).rename(tmp, file, Options.Rename.OVERWRITE);
  }

  /**
   * Appends {@code record} to the file (created empty first when absent) and makes it durable
   * before returning: {@code hsync} (every DataNode of the pipeline on HDFS), and on a local
   * disk an fsync of the file, since the local file system's append stream only flushes. The
   * file is opened for each record, so no lease outlives the call (an HA pair's other RM can
   * append next). A crash mid-append can leave a torn last record; the reader must expect it.
   */
  public void append(byte[] record) throws IOException {
    FileSystem fs = fs();
    if (!fs.exists(file)) {
      replace(new byte[0]);
    }
    try (FSDataOutputStream out = fs.append(file)) {
      out.write(record);
      out.hsync();
    }
    if (fs instanceof RawLocalFileSystem local) {
      try (FileChannel channel = FileChannel.open(local.pathToFile(file).toPath(),
          StandardOpenOption.WRITE)) {
        channel.force(true);
      }
    }
  }

  /** Makes the rename itself durable on a local disk; best effort. */
  private void syncLocalDirectory(FileSystem fs) {
    java.nio.file.Path local = ((RawLocalFileSystem) fs).pathToFile(dir).toPath();
    try (FileChannel d = FileChannel.open(local, StandardOpenOption.READ)) {
      d.force(true);
    } catch (IOException | RuntimeException e) {
      LOG.debug("Cannot sync directory {}: {}", dir, e.toString());
    }
  }

  /**
   * Renames the file out of the way for a person to inspect, as
   * {@code <name>.corrupt-<epoch millis>}.
   *
   * @return where it went, or empty if it could not be moved (logged)
   */
  public Optional<Path> moveAside() {
    long stamp = System.currentTimeMillis();
    try {
      FileSystem fs = fs();
      for (int attempt = 0; attempt < 100; attempt++) {
        Path target = new Path(dir, file.getName() + CORRUPT_INFIX + stamp
            + (attempt == 0 ? "" : "-" + attempt));
        if (fs.exists(target)) {
          continue; // two corrupt starts within a millisecond
        }
        if (fs.rename(file, target)) {
          return Optional.of(target);
        }
      }
      LOG.error("Cannot move corrupt state file {} aside", file);
    } catch (IOException e) {
      LOG.error("Cannot move corrupt state file {} aside: {}", file, e.toString());
    }
    return Optional.empty();
  }

  /** Deletes temporary files of writes a previous process did not finish. */
  public void deleteStaleTempFiles() {
    try {
      FileSystem fs = fs();
      if (!fs.exists(dir)) {
        return;
      }
      String prefix = file.getName() + ".";
      for (FileStatus st : fs.listStatus(dir,
          p -> p.getName().startsWith(prefix) && p.getName().endsWith(TEMP_SUFFIX))) {
        if (fs.delete(st.getPath(), false)) {
          LOG.info("Deleted {}, left over from an unfinished write", st.getPath());
        }
      }
    } catch (IOException e) {
      LOG.warn("Cannot remove leftover temporary files of {}: {}", file, e.toString());
    }
  }

  /** Replaces the pre-rename hook; tests use it to fail a write half way. */
  void setBeforeRenameForTesting(BeforeRename hook) {
    beforeRename = hook == null ? tmp -> { } : hook;
  }
}
