// stepcast-gui [SCENARIO] [--calibration PROFILE] [--constant NAME=VALUE ...] [--screenshot out.png] [--size WxH]
//              [--page overview|sweep|compare|tables]
//
// Opens SCENARIO (a file or a catalog scenario name; default: the GPT-3 175B Selene example) in the
// what-if window. With --screenshot it renders the window to a PNG once every view is computed and
// exits (0 when written, 1 otherwise); it then runs without a display (offscreen) unless
// QT_QPA_PLATFORM says otherwise, and uses settings of its own so the user's layout is untouched.

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QImage>
#include <QRegularExpression>
#include <QSettings>
#include <QTemporaryDir>

#include <cstdio>
#include <cstring>
#include <memory>

#include "gui/models/calibration_profiles.h"
#include "gui/models/explorer_session.h"
#include "gui/widgets/main_window.h"
#include "gui/widgets/sweep_view.h"
#include "simulator/diagnostics.h"

using namespace stepcast::gui;

namespace {

bool wants_screenshot(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--screenshot", 12) == 0) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const bool screenshot_mode = wants_screenshot(argc, argv);
  if (screenshot_mode && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("stepcast-gui"));
  QApplication::setOrganizationName(QStringLiteral("stepcast"));
  QApplication::setApplicationVersion(QStringLiteral(STEPCAST_VERSION));

  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("What-if exploration of large-model training and inference cost"));
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument(QStringLiteral("scenario"), QStringLiteral("Scenario file or catalog scenario name"),
                               QStringLiteral("[SCENARIO]"));
  const QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                      QStringLiteral("Render the window to FILE (PNG) and exit"), QStringLiteral("FILE"));
  const QCommandLineOption size(QStringLiteral("size"), QStringLiteral("Window size, e.g. 1600x1000"),
                                QStringLiteral("WxH"), QStringLiteral("1600x1000"));
  const QCommandLineOption page(QStringLiteral("page"), QStringLiteral("Page to show: overview, sweep, compare or tables"),
                                QStringLiteral("PAGE"), QStringLiteral("overview"));
  const QCommandLineOption calibration(QStringLiteral("calibration"),
                                       QStringLiteral("Predict with a calibration profile (stepcast calibrate -o FILE)"),
                                       QStringLiteral("PROFILE"));
  const QCommandLineOption constant(
      QStringLiteral("constant"),
      QStringLiteral("Set a model constant by hand (repeatable; names as in stepcast explain's sensitivity table): "
                     "adds a what-if variant of the chosen model and selects it"),
      QStringLiteral("NAME=VALUE"));
  parser.addOptions({screenshot, size, page, calibration, constant});
  parser.process(app);

  const QRegularExpressionMatch wh = QRegularExpression(QStringLiteral("^(\\d+)x(\\d+)$")).match(parser.value(size));
  if (!wh.hasMatch()) {
    std::fprintf(stderr, "stepcast-gui: --size expects WxH, e.g. 1600x1000\n");
    return 2;
  }
  const QString page_name = parser.value(page);
  MainWindow::Page first_page = MainWindow::Page::overview;
  if (page_name == QLatin1String("compare")) {
    first_page = MainWindow::Page::compare;
  } else if (page_name == QLatin1String("sweep")) {
    first_page = MainWindow::Page::sweep;
  } else if (page_name == QLatin1String("tables")) {
    first_page = MainWindow::Page::tables;
  } else if (page_name != QLatin1String("overview")) {
    std::fprintf(stderr, "stepcast-gui: --page expects overview, sweep, compare or tables\n");
    return 2;
  }

  // Screenshots use throw-away settings: the picture does not depend on (or change) a user's layout.
  QTemporaryDir scratch;
  std::unique_ptr<QSettings> settings =
      screenshot_mode ? std::make_unique<QSettings>(scratch.filePath(QStringLiteral("settings.ini")), QSettings::IniFormat)
                      : std::make_unique<QSettings>();

  StaticProfileSource profiles;
  ExplorerSession session(profiles);
  MainWindow window(session, *settings);
  if (screenshot_mode) window.resize(wh.captured(1).toInt(), wh.captured(2).toInt());
  if (parser.isSet(calibration)) window.open_profile(parser.value(calibration));
  if (parser.isSet(constant)) {
    std::vector<std::string> texts;
    for (const QString& v : parser.values(constant)) texts.push_back(v.toStdString());
    try {
      window.add_variant(with_constants(session.profile(), texts));
    } catch (const stepcast::InputError& e) {
      std::fprintf(stderr, "stepcast-gui: %s\n", e.what());
      return 2;
    }
  }
  const QStringList args = parser.positionalArguments();
  window.open_scenario(args.isEmpty() ? QStringLiteral("gpt3-175b-selene") : args.front());
  window.show();
  if (!screenshot_mode) {
    if (parser.isSet(page)) window.show_page(first_page);
    return QApplication::exec();
  }

  if (!session.wait_until_idle(120000)) {
    std::fprintf(stderr, "stepcast-gui: the prediction did not finish in time\n");
    return 1;
  }
  if (first_page == MainWindow::Page::compare) {
    // Show a real comparison: A is the scenario as given, B the same with twice the micro-batch.
    session.pin_baseline();
    const QVariant mb = session.editor().value(QStringLiteral("training.micro_batch"));
    if (mb.isValid()) session.editor().set_value(QStringLiteral("training.micro_batch"), mb.toInt() * 2);
    session.wait_until_idle(120000);
  }
  if (first_page == MainWindow::Page::sweep) {
    // Show a real search: run it to the end before the picture is taken.
    window.sweep_view().run();
    session.sweep().wait_until_idle(300000);
  }
  window.show_page(first_page);
  QApplication::processEvents();
  const QImage image = window.grab().toImage();
  const QString out = parser.value(screenshot);
  if (image.isNull() || !image.save(out, "PNG")) {
    std::fprintf(stderr, "stepcast-gui: cannot write %s\n", qPrintable(out));
    return 1;
  }
  std::printf("%s: %dx%d\n", qPrintable(out), image.width(), image.height());
  return 0;
}
