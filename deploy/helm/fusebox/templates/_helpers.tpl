{{/* The name of every object: the release, and the chart unless the release already says it. */}}
{{- define "fusebox.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "fusebox.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "fusebox.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{ include "fusebox.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* The Secret holding the variables fusebox.yaml names. */}}
{{- define "fusebox.secretName" -}}
{{- .Values.secrets.existingSecret | default (printf "%s-env" (include "fusebox.fullname" .)) -}}
{{- end -}}

{{/* The shared state's URL: the external Redis, the bundled one, or none. */}}
{{- define "fusebox.stateURL" -}}
{{- if .Values.redis.url -}}
{{- .Values.redis.url -}}
{{- else if .Values.redis.bundled.enabled -}}
{{- printf "redis://%s-redis:6379/0" (include "fusebox.fullname" .) -}}
{{- end -}}
{{- end -}}
