#pragma once
// Exports a chart (any widget) as a picture: PNG (raster, at the widget's size times `scale`) or
// SVG (vector, through QSvgGenerator), chosen by the file's suffix.

#include <QString>

class QWidget;

namespace stepcast::gui {

// False with `error` set for an unknown suffix or a file that cannot be written.
bool export_widget_image(QWidget& widget, const QString& path, QString* error = nullptr, double scale = 2.0);

}  // namespace stepcast::gui
